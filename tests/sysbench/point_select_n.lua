-- SPDX-License-Identifier: MIT
-- point_select_n.lua - one prepared point SELECT per event on one connection, for round-trip
-- accounting tests (tests/sysbench/rt-accounting.sh). Needs sbtest1 with ids 1..100.
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare("SELECT c FROM sbtest1 WHERE id=?")
  param = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(param)
  n = 0
end

function event()
  n = n + 1
  param:set(n % 100 + 1)
  local rs = stmt:execute()
  rs:free()
end

function thread_done()
  stmt:close()
  con:disconnect()
end
