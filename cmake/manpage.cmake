# SPDX-License-Identifier: MIT
# A man page for every installed program, made at build time from its --help by help2man and
# installed gzipped to share/man/man1. tools/CMakeLists.txt calls fbwire_man_page for each program
# it installs (the loop over tools/*/main.c included), so a new tool gets one without more work.
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
add_custom_target(man_pages ALL)
# A sanitizer build runs its programs for --help too: no leak report in the text, and the sysbench
# launcher preloads the (sanitized) plug-in into the stock sysbench, where ASan cannot come first.
set(FBWIRE_MAN_ENV)
if(FBWIRE_SANITIZE)
  set(FBWIRE_MAN_ENV ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0)
endif()

# fbwire_man_page(NAME PROGRAM "one-line description" [ENV VAR=VALUE...])
# PROGRAM is a path or a generator expression ($<TARGET_FILE:...>); ENV is set while it runs.
function(fbwire_man_page name program description)
  cmake_parse_arguments(M "" "" "ENV;DEPENDS" ${ARGN})
  set(dir ${CMAKE_BINARY_DIR}/man)
  set(page ${dir}/${name}.1)
  add_custom_command(
    OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_COMMAND} -E env FBWIRE_MAN_PROG=${program} ${FBWIRE_MAN_ENV} ${M_ENV}
            ${HELP2MAN} --no-info --section=1 --version-string=${name}\ ${PROJECT_VERSION}
            --name=${description} --source=fbwire --manual=fbwire --output=${page}
            ${PROJECT_SOURCE_DIR}/cmake/help2man-run.sh
    COMMAND ${GZIP} -9nf ${page}
    DEPENDS ${M_DEPENDS} ${PROJECT_SOURCE_DIR}/cmake/help2man-run.sh
    COMMENT "man page ${name}.1 from ${name} --help"
    VERBATIM)
  add_custom_target(man_${name} DEPENDS ${page}.gz)
  add_dependencies(man_pages man_${name})
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
