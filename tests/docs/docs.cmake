# SPDX-License-Identifier: MIT
# Checks of the documentation against the tree (label "unit", no server, a second each):
#   docs_refs  every document a comment or doc cites exists (file, #anchor, §section; Markdown links)
#   docs_map   docs/design.md names every .c file and lists the internal headers tools include
#   docs_driver  driver/ files in layers without cycles, no fbw_ names in driver/ or measure/
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(check refs map driver)
  add_test(NAME docs_${check}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_${check}.py ${CMAKE_SOURCE_DIR})
  set_tests_properties(docs_${check} PROPERTIES LABELS unit TIMEOUT 60)
endforeach()
