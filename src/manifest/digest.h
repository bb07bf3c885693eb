// digest.h — "sha256:<64 hex>" of bytes, the spelling of the report's policy
// digest (include/cordon/report.h), for gate and extension manifests and the gates' reports.
#pragma once

#include <string>
#include <string_view>

namespace cordon::manifest {

std::string sha256_digest(std::string_view bytes);

}  // namespace cordon::manifest
