// The pool's scan hooks of this process (core/pool_scan_hooks.h).
#include "core/pool_scan_hooks.h"

namespace cordon::core {

pool_scan_hooks& process_pool_scan_hooks() {
  static pool_scan_hooks hooks;
  return hooks;
}

}  // namespace cordon::core
