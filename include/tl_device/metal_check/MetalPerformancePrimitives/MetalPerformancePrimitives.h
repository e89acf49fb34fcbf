// Shim for the MSL syntax check: see ../mpp_check.h.
#include "../mpp_check.h"
