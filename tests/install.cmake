# Installing the library and building a program against the installed tree
# (CMake package and pkg-config, shared and static): tests/install/.
set(MT_CONSUMER_CFLAGS "")
if(MT_SANITIZE)
  set(MT_CONSUMER_CFLAGS "-fsanitize=address,undefined")
elseif(MT_TSAN)
  set(MT_CONSUMER_CFLAGS "-fsanitize=thread")
endif()
add_test(NAME test_install
         COMMAND ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install-tree
                 "${MT_CONSUMER_CFLAGS}")
