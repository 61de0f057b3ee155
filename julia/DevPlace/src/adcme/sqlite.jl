# ADCME's src/sqlite.jl: SQLite databases through Python's sqlite3 in the host
# (python/devplace/bridge/adcme/sqlite.py). Results come back as Julia values: rows as tuples,
# NULL as `nothing`. Each `execute` is atomic (a savepoint): a failed statement, or the failed row
# of many, leaves nothing behind, and a killed process leaves the file at its last commit.

"""
    Database(path=nothing; commit_after_execute=true)
    Database(f, path=nothing; commit_after_execute=true)

ADCME's SQLite database: the file `path` (created if missing), or an in-memory database when
`path` is `nothing` (or `missing`), gone once closed. With `commit_after_execute` every
[`execute`](@ref) commits; else [`commit`](@ref) or `close` does. A closed file database opens
again on its next use. The do-block form runs `f(db)`, then commits and closes (rolls back and
closes if `f` throws) and returns what `f` returned:

```julia
Database("sim.db") do db
    execute(db, "CREATE TABLE runs (name text, dt real)")
end
```
`keys(db)` lists the tables (and indexes), `keys(db, table)` a table's columns, `db[table]` its
rows, `delete!(db, table)` drops it, `push!(db, table, (col=value, ...)...)` inserts or replaces
records.
"""
struct Database
    o::PyObject
end

const SQLITE = "adcme.sqlite"

function Database(path::Union{Nothing,Missing,AbstractString} = nothing;
                  commit_after_execute::Bool = true)
    file = path isa AbstractString ? abspath(path) : nothing
    Database(bridge_rule(SQLITE, "open_database", file, commit_after_execute))
end

function Database(f::Function, args...; kwargs...)
    db = Database(args...; kwargs...)
    out = try
        f(db)
    catch
        bridge_rule(SQLITE, "close", db.o, false)
        rethrow()
    end
    close(db)
    return out
end

Base.show(io::IO, db::Database) = print(io, "Database(", repr(db.o.path), ")")

"""
    DevPlace.SQLResult

What [`execute`](@ref) returns: the `rows` a query selected (tuples, one value per column,
NULL as `nothing`), the `columns`' names and `rowcount`, the rows a change touched (-1 when
SQLite does not say). It iterates over its rows: `collect(execute(db, "SELECT ..."))`.
"""
struct SQLResult
    rows::Vector{Any}
    columns::Vector{String}
    rowcount::Int
end

Base.iterate(r::SQLResult, i...) = iterate(r.rows, i...)
Base.length(r::SQLResult) = length(r.rows)
Base.eltype(::Type{SQLResult}) = Any
Base.getindex(r::SQLResult, i) = r.rows[i]

"""
    execute(db::Database, sql, args...) -> SQLResult
    execute(f, db::Database)

Run the SQL statement `sql` in `db` (ADCME's `execute`). With parameters (`?` in `sql`), it runs
once per row: `args` is one vector of rows (tuples), or several columns of equal length zipped
into rows (`execute(db, "INSERT INTO t VALUES (?, ?)", t1, t2)`); a tuple alone is one row. The
do-block form runs the SQL that `f()` returns. A statement SQLite refuses throws a `PyError`
naming the statement and SQLite's reason (`IntegrityError: UNIQUE constraint failed: ...`), and
leaves nothing of itself in the database.
"""
function execute(db::Database, sql::AbstractString, args...)
    if length(args) == 1 && args[1] isa Tuple
        rows, cols, count = bridge_rule(SQLITE, "execute", db.o, String(sql), (); one_row = args[1])
    else
        params = Any[a isa Tuple ? collect(a) : a for a in args]
        all(a -> a isa AbstractVector, params) || wrong_argument("execute", "args", args,
            "rows (a vector of tuples), columns (vectors of equal length) or one tuple",
            "execute(db, \"INSERT INTO t VALUES (?, ?)\", [(1.0, \"a\"), (2.0, \"b\")])")
        rows, cols, count = bridge_rule(SQLITE, "execute", db.o, String(sql), params)
    end
    return SQLResult(rows, cols, count)
end
execute(f::Function, db::Database) = execute(db, f())

"""
    commit(db::Database)

Commit what [`execute`](@ref) left pending in `db` (with `commit_after_execute=false`).
"""
commit(db::Database) = (bridge_rule(SQLITE, "commit", db.o); nothing)

"""
    close(db::Database)

Commit what is pending and close the connection (ADCME's `close`); a file database opens
again on its next use, an in-memory one is gone.
"""
Base.close(db::Database) = (bridge_rule(SQLITE, "close", db.o, true); nothing)

"""
    keys(db::Database) -> Vector{String}
    keys(db::Database, table) -> Vector{String}

The names of `db`'s tables and indexes (SQLite's `sqlite_master`); with `table`, its column
names (a `PyError` naming the statement if there is no such table).
"""
Base.keys(db::Database) = String[bridge_rule(SQLITE, "table_names", db.o)...]
Base.keys(db::Database, table::AbstractString) =
    String[bridge_rule(SQLITE, "columns", db.o, String(table))...]

"""
    db[table] -> Vector

The rows of `table` (tuples), as `collect(execute(db, "SELECT * FROM table"))`.
"""
Base.getindex(db::Database, table::AbstractString) =
    collect(Any, bridge_rule(SQLITE, "table_rows", db.o, String(table)))

"""
    delete!(db::Database, table)

Drop `table` from `db`.
"""
Base.delete!(db::Database, table::AbstractString) =
    (bridge_rule(SQLITE, "drop_table", db.o, String(table)); db)

"""
    push!(db::Database, table, records::NamedTuple...)

Insert each record (`(name="sim1", dt=0.1)`: column => value, `nothing` for NULL) into
`table`, replacing a row with the same key.
"""
function Base.push!(db::Database, table::AbstractString, records::NamedTuple...)
    bridge_rule(SQLITE, "insert", db.o, String(table),
                [Dict{String,Any}(string(k) => v for (k, v) in pairs(r)) for r in records])
    return db
end
