# Installing minitriton like a C library (cmake --install build [--prefix P]):
#
#   include/minitriton.h
#   lib/libminitriton.so.0.1.0 (+ .so.0, .so)   the shared library: it carries
#                                              its dependencies (LLVM, libffi)
#   lib/libminitriton.a                        the static library: a program
#                                              linking it links them too
#   bin/mtc
#   lib/cmake/minitriton/                      find_package(minitriton):
#       minitriton::minitriton (shared), minitriton::minitriton_static
#       (its dependencies in its link interface)
#   lib/pkgconfig/minitriton.pc                pkg-config --libs minitriton
#   lib/pkgconfig/minitriton-static.pc         pkg-config --libs minitriton-static
#
# tests/install/ builds examples/embed.c against the installed tree all four
# ways.
include(CMakePackageConfigHelpers)

set(MT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/minitriton)
install(TARGETS minitriton minitriton_static EXPORT minitritonTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mtc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/minitriton.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT minitritonTargets NAMESPACE minitriton:: DESTINATION ${MT_CMAKE_DIR})

configure_package_config_file(cmake/minitritonConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/minitritonConfig.cmake INSTALL_DESTINATION ${MT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minitritonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minitritonConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/minitritonConfigVersion.cmake
        DESTINATION ${MT_CMAKE_DIR})

# pkg-config: the static library's dependencies as linker flags. With
# LLVM's static component libraries, llvm-config lists them and their own
# system libraries; with the shared libLLVM, it is -lLLVM-19.
if(NOT MT_LLVM_SHARED OR MT_LLVM_STATIC)
  find_program(MT_LLVM_CONFIG NAMES llvm-config-19 llvm-config PATHS ${LLVM_TOOLS_BINARY_DIR})
  execute_process(COMMAND ${MT_LLVM_CONFIG} --link-static --ldflags --libs
                          core orcjit native passes irreader linker target analysis support
                          --system-libs
                  OUTPUT_VARIABLE MT_PC_LLVM OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" " " MT_PC_LLVM "${MT_PC_LLVM}")
  set(MT_PC_LLVM "${MT_PC_LLVM} -lstdc++")
endif()
# a library given by its path becomes -L DIR -lNAME
function(mt_pc_flag out path)
  get_filename_component(dir ${path} DIRECTORY)
  get_filename_component(name ${path} NAME_WE)
  string(REGEX REPLACE "^lib" "" name ${name})
  set(${out} "-L${dir} -l${name}" PARENT_SCOPE)
endfunction()
if(MT_LLVM_SHARED AND NOT MT_LLVM_STATIC)
  mt_pc_flag(MT_PC_LLVM ${MT_LLVM_SHARED})
endif()
mt_pc_flag(MT_PC_FFI ${FFI_LIB})
set(MT_PC_DEPS "${MT_PC_LLVM} ${MT_PC_FFI} -pthread -lm -ldl")
# relocatable: the prefix is found from the .pc file's own place
file(RELATIVE_PATH MT_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" MT_PC_UP "${MT_PC_UP}")
foreach(pc minitriton minitriton-static)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
