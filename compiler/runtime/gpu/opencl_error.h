// OpenCL error codes by name, for messages: "CL_INVALID_WORK_GROUP_SIZE" reads better
// than -54 and is what a user searches for.
#pragma once

#include <string>

namespace temper {

// "CL_OUT_OF_RESOURCES"; "OpenCL error -9999" for a code OpenCL 1.2 does not define.
std::string cl_error_name(int code);

}  // namespace temper
