# Code generation: hand-built lowered TIR through LLVM and the ORC JIT, run
# and compared with C references (src/codegen/).
mt_test(test_codegen SOURCES ${PROJECT_SOURCE_DIR}/tests/codegen/test_codegen.c
        LAYERS mt_support mt_tir mt_codegen)
