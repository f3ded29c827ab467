// cgroups.hpp: this process's cgroup of a controller, level by level, from /proc/self/cgroup.
#include "core/cgroups.hpp"

#include <fstream>
#include <sstream>

namespace core {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {
// Whether the comma list `controllers` ("cpu,cpuacct") holds `controller`.
bool names(std::string_view controllers, std::string_view controller) {
  while (!controllers.empty()) {
    const size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == controller) return true;
    if (comma == std::string_view::npos) break;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}
}  // namespace

void for_each_cgroup_level(const std::string& root, std::string_view controller,
                           const std::function<void(const std::string& dir, const std::string& path, bool v2)>& visit) {
  std::istringstream lines(read_text(root + "/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    const bool v2 = line.substr(0, first) == "0" && controllers.empty();
    if (!v2 && !names(controllers, controller)) continue;
    std::string base = root + "/sys/fs/cgroup";
    if (!v2) base.append("/").append(controller);
    for (;;) {
      visit(base + (path == "/" ? "" : path), path, v2);
      if (path == "/" || path.empty()) break;
      const size_t slash = path.find_last_of('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
}

}  // namespace core
