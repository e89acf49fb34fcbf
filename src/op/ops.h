// Every tile op of the IR, one header each (included at the end of ir/stmt.h). Adding an op: see
// docs/adding_an_op.md.
#pragma once
#include "op/atomic_add.h"
#include "op/copy.h"
#include "op/cumsum.h"
#include "op/fill.h"
#include "op/gemm.h"
#include "op/reduce.h"
#include "op/tcgen05_gemm.h"
