# How long the programs take to compile (included last by the top CMakeLists.txt,
# once every target exists). Nothing here changes what a program computes.
#
# 1. Precompiled headers: nlohmann/json and cxxopts (with the standard headers they
#    pull in) are parsed by nearly every unit, a third of a unit's compile time.
#    Compiled once (numpipe_common's) and reused by the other libraries; fluid's kernels,
#    compiled with flags of their own (-fno-math-errno), and gen-input (an executable:
#    -fPIE) precompile their own copy; the one-unit programs parse the headers.
#    Off by default where a compiler cache (CMAKE_CXX_COMPILER_LAUNCHER, e.g. ccache)
#    is in use: ccache does not cache units built with a precompiled header, and it
#    saves more than the header does.
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(numpipe_pch_default OFF)
else()
  set(numpipe_pch_default ON)
endif()
option(NUMPIPE_PCH "Precompile the heavy headers (json, cxxopts); default: on without a compiler cache" ${numpipe_pch_default})

set(NUMPIPE_PCH_HEADERS
  "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp$<ANGLE-R>>"
  "$<$<COMPILE_LANGUAGE:CXX>:<cxxopts.hpp$<ANGLE-R>>")

# The programs' targets (libraries and executables of numpipe-tools), those present.
set(numpipe_build_targets numpipe_common numpipe_kernels_price numpipe_kernels_integrate numpipe_kernels_mle
    numpipe_kernels_ns numpipe_kernels_fluid numpipe_export numpipe_profile_report numpipe_render)
get_property(numpipe_tool_targets GLOBAL PROPERTY NUMPIPE_TOOLS)
list(APPEND numpipe_build_targets ${numpipe_tool_targets})

if(NUMPIPE_PCH)
  target_precompile_headers(numpipe_common PRIVATE ${NUMPIPE_PCH_HEADERS})
  foreach(t ${numpipe_build_targets})
    if(NOT TARGET ${t} OR t STREQUAL numpipe_common)
      continue()
    endif()
    get_target_property(t_type ${t} TYPE)
    get_target_property(t_sources ${t} SOURCES)
    list(FILTER t_sources INCLUDE REGEX "\\.cpp$")
    list(LENGTH t_sources t_units)
    if(t_type STREQUAL "EXECUTABLE")
      # -fPIE, not the libraries' -fPIC: a header of its own where it has units enough
      if(t_units GREATER 2)
        target_precompile_headers(${t} PRIVATE ${NUMPIPE_PCH_HEADERS})
      endif()
    elseif(t STREQUAL numpipe_kernels_fluid)
      target_precompile_headers(${t} PRIVATE ${NUMPIPE_PCH_HEADERS})
    else()
      target_precompile_headers(${t} REUSE_FROM numpipe_common)
    endif()
  endforeach()
  message(STATUS "numpipe: precompiled headers ON (json, cxxopts)")
endif()

# 2. -O1 for the code that is not numerics: option parsing, reading and writing
#    records, reports, tool mains, the input generators (whose loops call libm) and
#    the backends' dispatch and tuning. Optimisation is two thirds of a unit's compile
#    time at -O3, and none of these units runs long. No result changes: -O levels
#    keep IEEE semantics (no -ffast-math; -std=c++17 contracts no FMA), and the
#    numerical kernels keep the build type's flags. Inline functions a kernel shares
#    with these units stay fast: a kernel's hot calls are inlined into it at -O3
#    (cmake/comdat-check.py BUILD lists what the linker could take from an -O1 unit).
option(NUMPIPE_LIGHT_OPT "Compile the code that is not numerics at -O1 (build types other than Debug)" ON)
set(NUMPIPE_LIGHT_OPT_SOURCES
  common/cli.cpp common/data_files.cpp common/device.cpp common/labels.cpp common/profile.cpp
  common/progress.cpp common/run.cpp common/signals.cpp common/text_table.cpp common/units.cpp
  kernels/fluid/dispatch.cpp kernels/fluid/tuning.cpp kernels/fluid/io.cpp
  kernels/ns/dispatch.cpp kernels/ns/tuning.cpp kernels/ns/io.cpp kernels/ns/params.cpp
  kernels/integrate/backend.cpp kernels/integrate/tuning.cpp kernels/integrate/io.cpp
  kernels/mle/backend.cpp kernels/mle/tuning.cpp kernels/mle/io.cpp
  kernels/price/io.cpp
  tools/fluid-step.cpp tools/integrate.cpp tools/mle-fit.cpp tools/ns-step.cpp tools/price.cpp
  tools/verify.cpp tools/inspect.cpp tools/export.cpp tools/profile-report.cpp tools/render.cpp
  tools/gen-input/main.cpp tools/gen-input/array.cpp tools/gen-input/price.cpp tools/gen-input/integrate.cpp
  tools/gen-input/mle.cpp tools/gen-input/ns.cpp tools/gen-input/fluid.cpp
  tools/export/dataset.cpp tools/export/csv.cpp tools/export/vtk.cpp tools/export/netcdf.cpp
  tools/profile-report/report.cpp tools/profile-report/store.cpp
  tools/render/plot.cpp tools/render/text.cpp tools/render/picture.cpp)
if(NUMPIPE_LIGHT_OPT AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  foreach(t ${numpipe_build_targets})
    if(NOT TARGET ${t})
      continue()
    endif()
    get_target_property(t_sources ${t} SOURCES)
    get_target_property(t_dir ${t} SOURCE_DIR)
    foreach(s ${t_sources})
      get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${t_dir})
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${abs})
      if(rel IN_LIST NUMPIPE_LIGHT_OPT_SOURCES)
        set_source_files_properties(${abs} TARGET_DIRECTORY ${t} PROPERTIES COMPILE_OPTIONS "-O1")
      endif()
    endforeach()
  endforeach()
endif()
