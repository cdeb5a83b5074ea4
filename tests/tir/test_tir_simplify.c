#include "tir/tir_test.h"
#include "passes/tir/tir_passes.h"
int main(void) { return 0; }
