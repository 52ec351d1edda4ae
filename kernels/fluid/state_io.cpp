#include "state_io.hpp"

#include <cmath>

#include "common/finite.hpp"

namespace numpipe::fluid {

StateInput find_state(const std::vector<Record>& records) {
  StateInput in;
  in.records.assign(6, nullptr);
  for (const auto& r : records)
    for (int k = 0; k < 6; ++k)
      if (r.name == kFieldNames[k]) in.records[k] = &r;
  for (int k = 0; k < 6; ++k)
    if (!in.records[k])
      fail_input(std::string("missing record '") + kFieldNames[k] +
                 "' (a fluid state has records d, u, v, d0, u0, v0; make one with gen-input fluid)");
  const Record& d = *in.records[0];
  if (d.shape.size() != 2)
    fail_input("record 'd' must be a 2-D array [ny+2, nx+2], got shape " + shape_string(d.shape));
  for (int axis = 0; axis < 2; ++axis) {
    const std::int64_t cells = d.shape[static_cast<std::size_t>(axis)] - 2;
    const std::string what = std::string(axis == 0 ? "ny" : "nx") + " = " + std::to_string(cells);
    if (cells < kMinN) fail_input("grid too small: " + what + " (shape " + shape_string(d.shape) + "), need " + std::to_string(kMinN) + " or more");
    if (cells > kMaxN) fail_input("grid too large: " + what + ", at most " + std::to_string(kMaxN));
  }
  if (d.dtype != DType::f4 && d.dtype != DType::f8)
    fail_input(std::string("record 'd' must be f4 or f8, got ") + dtype_name(d.dtype));
  for (int k = 1; k < 6; ++k) {
    const Record& r = *in.records[k];
    if (r.shape != d.shape)
      fail_input(std::string("shape of '") + kFieldNames[k] + "' is " + shape_string(r.shape) + ", expected " +
                 shape_string(d.shape) + " like 'd'");
    if (r.dtype != d.dtype)
      fail_input(std::string("dtype of '") + kFieldNames[k] + "' is " + dtype_name(r.dtype) + ", expected " +
                 dtype_name(d.dtype) + " like 'd'");
  }
  for (int k = 0; k < 6; ++k) {  // on all threads: a 4096^2 state is 100 million values
    const Record& r = *in.records[k];
    const std::int64_t at = r.dtype == DType::f4 ? first_non_finite(r.data<float>(), r.size())
                                                 : first_non_finite(r.data<double>(), r.size());
    if (at >= 0) {
      const std::size_t i = static_cast<std::size_t>(at);
      fail_input(std::string("non-finite value in '") + kFieldNames[k] + "' at [" +
                 std::to_string(i / static_cast<std::size_t>(d.shape[1])) + ", " +
                 std::to_string(i % static_cast<std::size_t>(d.shape[1])) + "]: " + std::to_string(r.value_as_double(i)));
    }
  }
  in.ny = static_cast<int>(d.shape[0] - 2);
  in.nx = static_cast<int>(d.shape[1] - 2);
  in.n = in.nx;
  in.dtype = d.dtype;
  in.attrs = d.attrs.is_object() ? d.attrs : json::object();
  return in;
}

template <class T>
Fields<T> load_fields(const StateInput& in) {
  Fields<T> f;
  f.resize_uninitialised(in.n);  // the conversion below writes every value, on all threads
  FieldVector<T>* dst[6] = {&f.d, &f.u, &f.v, &f.d0, &f.u0, &f.v0};
  for (int k = 0; k < 6; ++k) in.records[k]->convert_to(dst[k]->data());
  return f;
}

template <class T>
FieldVector<T> record_values(const Record& r) {
  FieldVector<T> out(r.size());
  r.convert_to(out.data());
  return out;
}
template FieldVector<float> record_values(const Record&);
template FieldVector<double> record_values(const Record&);

template Fields<float> load_fields(const StateInput&);
template Fields<double> load_fields(const StateInput&);

template <class T>
void write_fields(StreamWriter& w, const Fields<T>& f, const json& attrs, const std::string& prefix, bool all_six) {
  const Shape shape{f.n + 2, f.n + 2};
  const FieldVector<T>* src[6] = {&f.d, &f.u, &f.v, &f.d0, &f.u0, &f.v0};
  for (int k = 0; k < (all_six ? 6 : 3); ++k) w.write<T>(prefix + kFieldNames[k], shape, src[k]->data(), attrs);
}
template void write_fields(StreamWriter&, const Fields<float>&, const json&, const std::string&, bool);
template void write_fields(StreamWriter&, const Fields<double>&, const json&, const std::string&, bool);

}  // namespace numpipe::fluid
