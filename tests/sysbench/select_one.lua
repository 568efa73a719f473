#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- select_one.lua - one query per event on one connection, no tables needed (a run that only shows
-- which client answered: tests/sysbench/fbclient-library.sh). Prints "SELECT OK" per event.
function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end

function event()
   local row = con:query_row("select 40 + 2 from rdb$database")
   if tonumber(row) ~= 42 then error("FAIL select: got " .. tostring(row)) end
   print("SELECT OK")
end

function thread_done()
   con:disconnect()
end
