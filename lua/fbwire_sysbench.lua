-- SPDX-License-Identifier: MIT
-- fbwire_sysbench.lua - Firebird schema for the upstream sysbench OLTP scripts.
--
-- Embedded in libfbwire-sysbench.so and run after every script chunk that sysbench loads
-- (after_chunk). Upstream oltp_common.lua only knows MySQL and PostgreSQL DDL, so once its
-- chunk has defined the globals, create_table and cleanup are wrapped: for the fbwire and
-- fbclient drivers they create the same sbtest schema in Firebird (columns, types, PRIMARY KEY
-- or --secondary index, --create_secondary index on k, rows generated exactly as upstream
-- does) and give `id` MySQL AUTO_INCREMENT semantics under --auto_inc (a sequence and a BEFORE
-- INSERT trigger turn an explicit 0 or NULL into the next value). Other drivers see the
-- upstream functions unchanged. The scripts on disk are never modified.

local M = {}

local FIREBIRD = { fbwire = true, fbclient = true }

local function is_firebird(drv)
   return FIREBIRD[drv:name()] == true
end

local function seq_name(n) return "sbtest" .. n .. "_seq" end

-- The Firebird equivalent of upstream create_table(drv, con, table_num).
local function fb_create_table(drv, con, n)
   local opt = sysbench.opt
   local t = "sbtest" .. n

   print(string.format("Creating table '%s'...", t))
   con:query(string.format([[
CREATE TABLE %s (
  id INTEGER NOT NULL,
  k INTEGER DEFAULT 0 NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL%s
)]], t, opt.secondary and "" or ",\n  PRIMARY KEY (id)"))

   if opt.secondary then
      -- MySQL's "KEY xid (id)"; Firebird index names are per database, hence the suffix.
      con:query(string.format("CREATE INDEX xid_%d ON %s(id)", n, t))
   end

   if opt.auto_inc then
      con:query("DROP SEQUENCE IF EXISTS " .. seq_name(n))
      con:query("CREATE SEQUENCE " .. seq_name(n))
      con:query(string.format([[
CREATE TRIGGER %s_bi FOR %s ACTIVE BEFORE INSERT POSITION 0 AS
BEGIN
  IF (NEW.id IS NULL OR NEW.id = 0) THEN
    NEW.id = NEXT VALUE FOR %s;
END]], t, t, seq_name(n)))
   end

   if opt.table_size > 0 then
      print(string.format("Inserting %d records into '%s'", opt.table_size, t))
   end

   if opt.auto_inc then
      con:bulk_insert_init("INSERT INTO " .. t .. "(k, c, pad) VALUES")
   else
      con:bulk_insert_init("INSERT INTO " .. t .. "(id, k, c, pad) VALUES")
   end
   for i = 1, opt.table_size do
      local c_val = get_c_value()
      local pad_val = get_pad_value()
      if opt.auto_inc then
         con:bulk_insert_next(string.format("(%d, '%s', '%s')",
                                            sb_rand(1, opt.table_size), c_val, pad_val))
      else
         con:bulk_insert_next(string.format("(%d, %d, '%s', '%s')",
                                            i, sb_rand(1, opt.table_size), c_val, pad_val))
      end
   end
   con:bulk_insert_done()

   if opt.create_secondary then
      print(string.format("Creating a secondary index on '%s'...", t))
      con:query(string.format("CREATE INDEX k_%d ON %s(k)", n, t))
   end
end

local function wrap_create_table(orig)
   return function(drv, con, table_num)
      if is_firebird(drv) then
         return fb_create_table(drv, con, table_num)
      end
      return orig(drv, con, table_num)
   end
end

-- Upstream cleanup drops the tables (the triggers go with them); drop the sequences too.
local function wrap_cleanup(orig)
   return function(...)
      local results = { orig(...) }
      local drv = sysbench.sql.driver()
      if is_firebird(drv) then
         local con = drv:connect()
         for i = 1, sysbench.opt.tables do
            con:query("DROP SEQUENCE IF EXISTS " .. seq_name(i))
         end
         con:disconnect()
      end
      return unpack(results)
   end
end

local wrapped = setmetatable({}, { __mode = "k" })

-- Called by the plug-in after each chunk loaded with luaL_loadfile has run.
function M.after_chunk(filename)
   local ct = rawget(_G, "create_table")
   if type(ct) ~= "function" or wrapped[ct] then
      return
   end
   local new_ct = wrap_create_table(ct)
   wrapped[new_ct] = true
   rawset(_G, "create_table", new_ct)
   local cl = rawget(_G, "cleanup")
   if type(cl) == "function" and not wrapped[cl] then
      local new_cl = wrap_cleanup(cl)
      wrapped[new_cl] = true
      rawset(_G, "cleanup", new_cl)
   end
end

return M
