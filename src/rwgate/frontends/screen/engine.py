"""Where the SQL of :mod:`rwgate.frontends.screen.sql` runs: DuckDB embedded (default) or Spark.

An engine reads the input files into raw views with its own readers, loads the verdict table,
and runs the statements: DuckDB as written, within a memory limit; Spark through SQLGlot.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from rwgate.frontends.screen import sql
from rwgate.frontends.screen.doisql import ident, lit, lit_list
from rwgate.frontends.screen.inputs import InputError, InputGroup
from rwgate.frontends.screen.jsonlines import (
    MAX_OBJECT,
    gzip_arg,
    lines_json,
    objects_reader,
    pretty_json,
)
from rwgate.frontends.screen.records import REJECTS, SCANS
from rwgate.frontends.screen.verdicts import COLUMNS

_CROSSREF_TYPES = {
    "DOI": "VARCHAR",
    "reference": 'STRUCT("DOI" VARCHAR)[]',
    "issued": 'STRUCT("date-parts" BIGINT[][])',
    "items": 'STRUCT("DOI" VARCHAR, reference STRUCT("DOI" VARCHAR)[],'
    ' issued STRUCT("date-parts" BIGINT[][]))[]',
}
"""The fields of a Crossref record the screen reads."""
_CROSSREF_COLUMNS = "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in _CROSSREF_TYPES.items()) + "}"


def _duck_type(shape: Any) -> str:
    """A DuckDB type for a ``json_group_structure`` shape: a scalar type as it is, a list of them
    a list; a column of strings in some rows and lists in others (or mixed scalars), or anything
    nested, JSON (:func:`rwgate.frontends.screen.sql.values` reads each row's value or values)."""
    if isinstance(shape, str):
        return "VARCHAR" if shape == "NULL" else shape
    if isinstance(shape, list) and len(shape) == 1 and shape[0] in ("NULL", "VARCHAR"):
        return "VARCHAR[]"
    return "JSON"


_PATH = "filename = 'rwgate_path'"
"""The file's path as DuckDB reads it, under a name of rwgate's: a table's own ``filename`` or
``file_index`` column is the table's (DuckDB's virtual columns would give way to it)."""


class DuckEngine:
    """DuckDB in this process: nothing to start; ``memory_limit`` bounds it, spilling to disk."""

    name = "duckdb"

    def __init__(
        self, memory_limit: str, threads: int | None, temp_dir: Path | None, progress: bool
    ) -> None:
        import duckdb

        self.version = duckdb.__version__
        self._error = duckdb.Error
        self.con = duckdb.connect(config={"memory_limit": memory_limit})
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        if temp_dir is not None:
            self.con.execute(f"SET temp_directory = {lit(str(temp_dir))}")
        self.con.execute("SET preserve_insertion_order = false")
        if progress:
            self.con.execute("SET enable_progress_bar = true")
            self.con.execute("SET enable_progress_bar_print = true")
        else:
            self.con.execute("SET enable_progress_bar = false")

    def _reader(self, grp: InputGroup, i: int) -> str:
        files = lit_list(grp.files)
        if grp.container == "parquet":
            return f"read_parquet({files}, {_PATH}, file_row_number = true, union_by_name = true)"
        if grp.container == "csv":
            # Strictly, in the sniffed dialect: the rejects are kept for records.pass_rejects.
            assert grp.dialect is not None
            return (
                f"read_csv({lit_list(grp.paths())}, {_PATH}, {grp.dialect.options()},"
                f" store_rejects = true, rejects_table = '{REJECTS}{i}',"
                f" rejects_scan = '{SCANS}{i}')"
            )
        if lines_json(grp):
            # Each line holding an object, as jsonlines counted it (a line screened is a row).
            return objects_reader(grp, self._structure(grp))
        # A classic ``items`` file is one object (tens of MB in the public data file).
        return (
            f"read_json({files}, {_PATH}, format = 'auto', ignore_errors = true,"
            f" maximum_object_size = {1 << 28}, columns = {_CROSSREF_COLUMNS}{gzip_arg(grp)})"
        )

    def _structure(self, grp: InputGroup) -> dict[str, str]:
        """The columns of a JSON lines group: Crossref's fields, or a table's as DuckDB's
        sniffer types them from its objects (a value of another type is NULL in its row)."""
        if grp.shape == "crossref":
            return dict(_CROSSREF_TYPES)
        got = self.con.execute(
            "SELECT json_group_structure(json) FROM (SELECT json FROM"
            f" read_json_objects({lit_list(grp.files)}, format = 'newline_delimited',"
            f" ignore_errors = true, maximum_object_size = {MAX_OBJECT}{gzip_arg(grp)})"
            " WHERE json_type(json) = 'OBJECT' LIMIT 20480)"
        ).fetchone()
        shape = json.loads(got[0]) if got and got[0] else {}
        return {str(k): _duck_type(v) for k, v in shape.items()} if isinstance(shape, dict) else {}

    def parquet_columns(self, grp: InputGroup) -> dict[Path, list[str]]:
        """Each Parquet file's columns, read from the footers (no row is read)."""
        try:
            rows = self.con.execute(
                "SELECT file_name, name FROM parquet_schema("
                f"{lit_list(grp.files)}) WHERE num_children IS NULL OR num_children = 0"
            ).fetchall()
        except self._error as exc:
            first = str(exc).splitlines()[0]
            raise InputError(f"{grp.files[0]}: unreadable as parquet: {first}") from None
        named = {str(f): f for f in grp.files}
        by_file: dict[Path, list[str]] = {}
        for file_name, name in rows:
            by_file.setdefault(named.get(file_name, Path(file_name)), []).append(name)
        return by_file

    def load(self, groups: list[InputGroup], verdicts: Path) -> list[list[str]]:
        """Raw views ``in0``... and the verdict tables; the Parquet/JSON column names read."""
        names: list[list[str]] = []
        for i, (grp, start) in enumerate(zip(groups, _first_numbers(groups), strict=True)):
            try:
                number = f"list_position({lit_list(grp.paths())}, rwgate_path) - 1 + {start}"
                if grp.numbers is not None:
                    number = f"{grp.numbers}[list_position({lit_list(grp.paths())}, rwgate_path)]"
                self.con.execute(
                    f"CREATE TEMP VIEW in{i} AS SELECT * EXCLUDE (rwgate_path),"
                    f" {number} AS {sql.FILE} FROM {self._reader(grp, i)}"
                )
                described = self.con.execute(f"DESCRIBE in{i}").fetchall()
            except self._error as exc:
                first = str(exc).splitlines()[0]
                raise InputError(
                    f"{grp.files[0]}: unreadable as {grp.container}: {first}"
                ) from None
            names.append([str(r[0]) for r in described])
        picked = ", ".join(ident(name) for name, _ in COLUMNS)
        # Each kind copied once from the file (a copy of the whole first costs the start a third).
        for table, kind in (("vdoi", "doi"), ("vpmid", "pmid")):
            self.con.execute(
                f"CREATE TEMP TABLE {table} AS SELECT {picked} FROM read_parquet("
                f"{lit(str(verdicts))}) WHERE kind = '{kind}'"
            )
        self.con.execute("CREATE TEMP TABLE input_files (file BIGINT, name VARCHAR)")
        self.con.executemany("INSERT INTO input_files VALUES (?, ?)", input_files(groups))
        return names

    def view(self, name: str, statement: str) -> None:
        self.con.execute(f"CREATE TEMP VIEW {name} AS {statement}")

    def step(self, name: str, statement: str) -> None:
        """A link of the DOI chain: a view (DuckDB's planner nests them without copying)."""
        self.view(name, statement)

    def table(self, name: str, statement: str) -> None:
        self.con.execute(f"CREATE TEMP TABLE {name} AS {statement}")

    def fetch(self, statement: str) -> list[tuple[Any, ...]]:
        return self.con.execute(statement).fetchall()

    def write_parquet(self, statement: str, path: Path) -> None:
        self.con.execute(
            f"COPY ({statement}) TO {lit(str(path))} (FORMAT parquet, COMPRESSION zstd)"
        )

    def close(self) -> None:
        self.con.close()


class SparkEngine:
    """Spark (pyspark): the transpiled SQL, on ``local[*]`` or the cluster ``master`` names."""

    name = "spark"

    def __init__(self, master: str | None, progress: bool) -> None:
        import pyspark  # missing: rwgate's main says which extra to install, in one line
        from pyspark.sql import SparkSession

        self.version = pyspark.__version__
        builder = SparkSession.builder.appName("rwgate-screen")
        # Under spark-submit its --master and settings stand; else local[*] or --master.
        submitted = master is None and "PYSPARK_GATEWAY_PORT" in os.environ
        if not submitted:
            master = master or os.environ.get("SPARK_MASTER") or "local[*]"
            builder = builder.master(master)
        builder = builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
        builder = builder.config("spark.ui.enabled", "false")
        builder = builder.config("spark.sql.session.timeZone", "UTC")
        if master is not None and master.startswith("local"):
            # A local run shuffles small maps and one aggregate: a few partitions, not 200.
            builder = builder.config("spark.sql.shuffle.partitions", "8")
        if not submitted:
            builder = builder.config("spark.driver.memory", "2g")
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")

    def _read(self, grp: InputGroup, first: int) -> Any:
        from pyspark.sql import functions as F

        files = [str(f) for f in grp.files]
        reader = self.spark.read
        if grp.container == "parquet":
            # The row within its file, as DuckDB's file_row_number (Spark 3.5+ metadata).
            frame = reader.parquet(*files)
            frame = frame.withColumn("file_row_number", F.col("_metadata.row_index"))
        elif grp.container == "csv":
            assert grp.dialect is not None
            d = grp.dialect
            frame = (
                reader.option("header", True)
                .option("mode", "DROPMALFORMED")
                .option("sep", d.delimiter)
                .option("quote", d.quote)
                .option("escape", d.escape)
                .option("multiLine", True)
                .option("encoding", "UTF-8" if grp.read_as else d.encoding.upper())
                .csv([str(p) for p in grp.paths()])
            )
        elif grp.shape == "crossref":
            schema = (
                "DOI STRING, reference ARRAY<STRUCT<DOI: STRING>>,"
                " issued STRUCT<`date-parts`: ARRAY<ARRAY<BIGINT>>>,"
                " items ARRAY<STRUCT<DOI: STRING, reference: ARRAY<STRUCT<DOI: STRING>>,"
                " issued: STRUCT<`date-parts`: ARRAY<ARRAY<BIGINT>>>>>"
            )
            # An ``items`` file is one JSON value over many lines, a JSON lines file one work
            # per line: Spark reads the two with different options, so each form on its own.
            frames = []
            for multi in (True, False):
                chosen = [str(f) for f in grp.files if pretty_json(f, grp.compression) is multi]
                if chosen:
                    frames.append(reader.schema(schema).option("multiLine", multi).json(chosen))
            frame = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
        else:  # a line that is not JSON: counted unusable by rwgate.frontends.screen.jsonlines
            frame = reader.option("mode", "DROPMALFORMED").json(files)
        # The file's number, as DuckDB's: its path (not a file: URI) looked up among the
        # group's files (a file Spark names otherwise is unnamed in a bad-row sample, '?').
        uri = F.input_file_name()
        bare = "regexp_replace(input_file_name(), '^file:(//)?', '')"
        path = F.expr(f"try_url_decode(replace({bare}, '+', '%2B'))")
        given = grp.numbers or [first + j for j in range(len(grp.files))]
        numbers = self.spark.createDataFrame(
            [(os.path.abspath(f), given[j]) for j, f in enumerate(grp.paths())],
            "rwgate_path STRING, rwgate_file BIGINT",
        )
        frame = frame.withColumn("rwgate_path", F.when(uri.startswith("file:"), path))
        frame = frame.join(F.broadcast(numbers), "rwgate_path", "left").drop("rwgate_path")
        return frame.withColumnRenamed("rwgate_file", sql.FILE)

    def parquet_columns(self, grp: InputGroup) -> dict[Path, list[str]]:
        """Each Parquet file's columns: Spark would read a group by one file's schema and make
        the others' columns NULL (their rows ``no_doi``)."""
        return {f: list(self.spark.read.parquet(str(f)).columns) for f in grp.files}

    def load(self, groups: list[InputGroup], verdicts: Path) -> list[list[str]]:
        names = []
        for i, (grp, first) in enumerate(zip(groups, _first_numbers(groups), strict=True)):
            frame = self._read(grp, first)
            frame.createOrReplaceTempView(f"in{i}")
            names.append(list(frame.columns))
        frame = self.spark.read.parquet(str(verdicts)).select(*(name for name, _ in COLUMNS))
        frame.filter("kind = 'doi'").createOrReplaceTempView("vdoi")
        frame.filter("kind = 'pmid'").createOrReplaceTempView("vpmid")
        files = self.spark.createDataFrame(input_files(groups), "file BIGINT, name STRING")
        files.createOrReplaceTempView("input_files")
        return names

    def view(self, name: str, statement: str) -> None:
        self.spark.sql(sql.to_spark(statement)).createOrReplaceTempView(name)

    def step(self, name: str, statement: str) -> None:
        """A link of the DOI chain, materialised: the next link's plan starts from its rows, so
        Catalyst never sees the chain whole (merged, it grows exponentially)."""
        self.table(name, statement)

    def table(self, name: str, statement: str) -> None:
        frame = self.spark.sql(sql.to_spark(statement)).localCheckpoint(eager=True)
        frame.createOrReplaceTempView(name)

    def fetch(self, statement: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.spark.sql(sql.to_spark(statement)).collect()]

    def write_parquet(self, statement: str, path: Path) -> None:
        self.spark.sql(sql.to_spark(statement)).write.mode("overwrite").parquet(str(path))

    def close(self) -> None:
        self.spark.stop()


def _first_numbers(groups: list[InputGroup]) -> list[int]:
    """The number of each group's first file: files are numbered across groups, in order."""
    out, n = [], 0
    for grp in groups:
        out.append(n)
        n += len(grp.files) if grp.numbers is None else 0
    return out


def input_files(groups: list[InputGroup]) -> list[tuple[int, str]]:
    """Each file's number and name. A row carries the number of its file (:data:`sql.FILE`), which
    costs a tenth of the main pass less than carrying the name; the few rows a summary quotes
    get the name back from this table."""
    own = [f for grp in groups if grp.numbers is None for f in grp.files]
    return list(enumerate(str(f) for f in own))


def open_engine(
    name: str,
    *,
    memory_limit: str = "3GB",
    threads: int | None = None,
    temp_dir: Path | None = None,
    master: str | None = None,
    progress: bool | None = None,
) -> DuckEngine | SparkEngine:
    """The engine ``name`` (``duckdb`` or ``spark``): each reads the inputs (``load``) and runs
    the statements (``view``, ``step``, ``table``, ``fetch``, ``write_parquet``); a progress bar
    only on a terminal."""
    # DuckDB draws its bar on stdout, Spark on stderr: a bar only when both are a terminal,
    # never in a report that is piped or redirected.
    show = sys.stderr.isatty() and sys.stdout.isatty() if progress is None else progress
    if name == "spark":
        return SparkEngine(master, show)
    return DuckEngine(memory_limit, threads, temp_dir, show)
