# SPDX-License-Identifier: MIT
# Unit tests of the sysbench plug-in's pure parts (tests/driver/test_*.c, Criterion, label "unit"):
# the SQL dialect, statement classes, CPU accounting, the report. They link exactly the libraries
# the plug-in is built from (driver/CMakeLists.txt); the plug-in inside sysbench:
# tests/sysbench/tests.cmake.
if(TARGET fbwire_dialect AND TARGET fbwire_report)
  file(GLOB driver_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.c)
  foreach(src ${driver_tests})
    get_filename_component(base ${src} NAME_WE)
    set(exe driver_${base})
    add_executable(${exe} ${src})
    target_link_libraries(${exe} PRIVATE fbwire_dialect fbwire_report PkgConfig::CRITERION)
    add_test(NAME ${exe} COMMAND ${exe})
    set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
  endforeach()
endif()

# The driver and the tools decide on errors through the library's error model only: no message
# text compared, no gds code written as a number (tests/driver/check_error_model.py).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME driver_error_model
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_error_model.py ${CMAKE_SOURCE_DIR})
set_tests_properties(driver_error_model PROPERTIES LABELS unit TIMEOUT 60)
