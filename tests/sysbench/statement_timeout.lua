#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- statement_timeout.lua - --fbwire-statement-timeout inside sysbench, in one event (run by
-- tests/sysbench/statement-timeout.sh with --fbwire-ignore-errors=statement-timeout): a query
-- that would run for minutes ends with the restart-event error of an ignorable class, then the
-- same connection answers a query and runs a transaction. Prints "TIMEOUT OK" at the end; any
-- failed check raises an error.

-- Runs for minutes on FB3 and FB4 (tests/integ/test_cancel.c): only a timeout ends it.
local LONG_SQL = "select count(*) from rdb$fields a cross join rdb$fields b " ..
   "cross join rdb$fields c cross join rdb$types d"

local function check(cond, what)
   if not cond then error("FAIL " .. what, 2) end
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end

function event()
   local t0 = os.time()
   local ok, err = pcall(con.query, con, LONG_SQL)
   check(not ok, "the long query failed")
   check(type(err) == "table", "an ignorable (restart-event) error, got " .. tostring(err))
   check(err.errcode == sysbench.error.RESTART_EVENT, "errcode RESTART_EVENT")
   check(os.time() - t0 < 30, "ended by the timeout, not by running to its end")
   local row = con:query_row("select 42 from rdb$database")
   check(tonumber(row) == 42, "the connection answers after the timeout: " .. tostring(row))
   con:query("BEGIN")
   row = con:query_row("select count(*) from rdb$database")
   check(tonumber(row) == 1, "a transaction after the timeout")
   con:query("COMMIT")
   print("TIMEOUT OK")
end

function thread_done()
   con:disconnect()
end
