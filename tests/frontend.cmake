# Front end: lexer, parser, AST printer (src/frontend/).
mt_test(test_lexer SOURCES ${PROJECT_SOURCE_DIR}/tests/frontend/test_lexer.c
        LAYERS mt_support mt_frontend)
mt_test(test_parser SOURCES ${PROJECT_SOURCE_DIR}/tests/frontend/test_parser.c
        LAYERS mt_support mt_frontend)
