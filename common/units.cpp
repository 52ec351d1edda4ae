#include "common/units.hpp"

namespace numpipe {

std::string units_of(const nlohmann::json& attrs, const std::string& key, const std::string& record) {
  if (!attrs.is_object()) return "";
  const auto it = attrs.find("units");
  if (it == attrs.end()) return "";
  if (it->is_string()) return key == record ? it->get<std::string>() : "";
  if (!it->is_object()) return "";
  auto look = [&](const std::string& k) -> std::string {
    const auto e = it->find(k);
    return e != it->end() && e->is_string() ? e->get<std::string>() : "";
  };
  std::string u = look(key);
  // A snapshot of a field has the field's units (fluid-step's and ns-step's snap_ records).
  if (u.empty() && key.rfind("snap_", 0) == 0) u = look(key.substr(5));
  return u;
}

nlohmann::json with_units(const nlohmann::json& attrs, const std::string& record, const nlohmann::json& table) {
  if (!table.is_object() || table.empty() || !attrs.is_object()) return attrs;
  nlohmann::json out = attrs;
  nlohmann::json units = table;
  if (const auto it = attrs.find("units"); it != attrs.end()) {
    if (it->is_object()) {
      for (const auto& [k, v] : it->items()) units[k] = v;
    } else if (it->is_string() && !table.contains(record)) {
      units[record] = *it;
    }
  }
  out["units"] = std::move(units);
  return out;
}

}  // namespace numpipe
