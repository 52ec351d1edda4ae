// Built where libnetcdf is absent: NetCDF output is refused with the package to install.
#include "export/formats.hpp"

namespace numpipe::exporter {

bool netcdf_built() { return false; }

void write_netcdf(const Dataset&, const std::string&, int, const std::string&) {
  fail_input("--to netcdf: this export was built without NetCDF; install the NetCDF C library "
             "(Debian/Ubuntu: apt-get install libnetcdf-dev) and rebuild");
}

}  // namespace numpipe::exporter
