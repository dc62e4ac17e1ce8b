//! placeholder until written
use mlua::{Lua, Table};
/// Opens the library.
pub fn open(lua: &Lua) -> mlua::Result<Table> {
    lua.create_table()
}
