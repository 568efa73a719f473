# SPDX-License-Identifier: MIT
# Server tests on every Firebird version. A test defined with fbw_server_test() runs as itself
# (against fb3 and fb4, as written) and once more per name in FBW_EXTRA_SERVERS as <test>@<name>
# (integ_test_fetch@fb5), through tests/support/on-server.sh: there server <name>, registered with
# scripts/fb-servers.sh start-install or register, takes the place of fb4. A name that is not
# registered makes that entry exit 77, which ctest reports as skipped, with the reason in its
# output (ctest -V, or Testing/Temporary/LastTest.log). Labels: the original's, plus server_<name>,
# so `ctest -L server_fb5` runs everything against fb5.
# Not here, because they are about one particular server, not a version: the stock-config servers
# (fb3s, fb4s: sysbench_stock, the *_stall tests), fb3l and fb3r, the peers, and tests of FB3 only.
set(FBW_EXTRA_SERVERS fb5 fb6 CACHE STRING
    "Firebird servers beyond fb3 and fb4 that every server test also runs against (<test>@<name>)")
set(FBW_ON_SERVER ${CMAKE_CURRENT_LIST_DIR}/support/on-server.sh)

# fbw_server_test(<name> <command> [<arg>...]): add_test(NAME <name> COMMAND ...) and its
# <name>@<server> twins. Set the test's properties as usual; fbw_server_test_finish() copies them.
function(fbw_server_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set(cmd ${ARGN})
  list(GET cmd 0 first)
  if(TARGET ${first})  # add_test resolves a target name only as the command itself
    list(REMOVE_AT cmd 0)
    list(INSERT cmd 0 $<TARGET_FILE:${first}>)
  endif()
  foreach(srv ${FBW_EXTRA_SERVERS})
    add_test(NAME ${name}@${srv} COMMAND ${FBW_ON_SERVER} ${srv} ${cmd})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY FBW_SERVER_TESTS ${name})
endfunction()

# After every test is defined: each twin gets its original's labels, timeout, locks and
# environment, skip code 77, and a lock shared with its original (both use the same databases on
# fb3, so they must not run at the same time).
function(fbw_server_test_finish)
  get_property(names GLOBAL PROPERTY FBW_SERVER_TESTS)
  foreach(name ${names})
    set_property(TEST ${name} APPEND PROPERTY RESOURCE_LOCK fbw_dbs_${name})
    foreach(srv ${FBW_EXTRA_SERVERS})
      foreach(prop LABELS TIMEOUT RESOURCE_LOCK ENVIRONMENT WORKING_DIRECTORY)
        get_test_property(${name} ${prop} value)
        if(value)
          set_property(TEST ${name}@${srv} PROPERTY ${prop} "${value}")
        endif()
      endforeach()
      set_property(TEST ${name}@${srv} APPEND PROPERTY LABELS server_${srv})
      set_property(TEST ${name}@${srv} PROPERTY SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
endfunction()

# on-server.sh itself, on state dirs the test writes (no server): skip with the reason, fb4's
# place taken in the environment and in both env files, exit status passed through.
add_test(NAME servers_on_server COMMAND ${CMAKE_CURRENT_LIST_DIR}/support/on-server-check.sh)
set_tests_properties(servers_on_server PROPERTIES LABELS unit TIMEOUT 60)
