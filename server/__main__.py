"""`python -m server` / `mzspark`: start the pgwire server with an embedded Spark driver."""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import logging
import os
import signal
import sys

from server.admission import DEFAULT_CONCURRENT_QUERIES, DEFAULT_QUEUED_QUERIES


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="mzspark", description="Materialize-dialect SQL server on Apache Spark")
    p.add_argument("--listen-addr", default=os.environ.get("MZSPARK_LISTEN_ADDR", "127.0.0.1:6875"), help="HOST:PORT (port 0 = ephemeral)")
    p.add_argument("--data-dir", default=os.environ.get("MZSPARK_DATA_DIR", "./mzdata"))
    p.add_argument("--spark-master", default=os.environ.get("MZSPARK_SPARK_MASTER", "local[2]"), help="any Spark master URL; the server is the driver (client mode)")
    p.add_argument("--workers", type=int, default=None, help="replica workers (Spark shuffle partitions); default: the master's cores")
    p.add_argument("--spark-conf", action="append", default=[], metavar="K=V", help="extra Spark configuration (repeatable)")
    p.add_argument("--password", default=os.environ.get("MZSPARK_PASSWORD"), help="require this password (SCRAM-SHA-256 by default)")
    p.add_argument("--auth-method", default="scram-sha-256", choices=["scram-sha-256", "md5"])
    p.add_argument("--compute-replica-expiration-offset", default=None, help="interval; 0 = off")
    p.add_argument("--http-port", type=int, default=int(os.environ.get("MZSPARK_HTTP_PORT", "6876")),
                   help="the live plan page's port, on the --listen-addr host (0 = ephemeral, -1 = off)")
    p.add_argument("--max-concurrent-queries", type=int, default=DEFAULT_CONCURRENT_QUERIES,
                   help="statements running Spark jobs at once; others queue (constants never do)")
    p.add_argument("--max-queued-queries", type=int, default=DEFAULT_QUEUED_QUERIES,
                   help="statements that may wait for a compute slot; past it: 53300")
    p.add_argument("--log-level", default=os.environ.get("MZSPARK_LOG_LEVEL", "INFO"))
    return p.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    from server.coordinator import Coordinator
    from server.pgwire.server import PgServer

    host, _, port = args.listen_addr.rpartition(":")
    conf = {}
    for kv in args.spark_conf:
        k, _, v = kv.partition("=")
        conf[k] = v
    coord = Coordinator(args.data_dir, args.spark_master, args.workers, conf, args.password,
                        max_concurrent_queries=args.max_concurrent_queries, max_queued_queries=args.max_queued_queries)
    if args.compute_replica_expiration_offset is not None:
        coord.set_flag_default("compute_replica_expiration_offset", args.compute_replica_expiration_offset)
    loop = asyncio.get_running_loop()
    # start Spark (and rehydrate maintained objects) before accepting connections
    await loop.run_in_executor(None, coord.start_controller)
    server = PgServer(coord, host or "127.0.0.1", int(port), password=args.password, auth_method=args.auth_method)
    await server.start()
    http = None
    if args.http_port >= 0:
        from server.http import HttpServer

        http = HttpServer(coord, host or "127.0.0.1", args.http_port)
        await http.start()
        print(f"mzspark http on {host or '127.0.0.1'}:{http.port}", flush=True)
    print(f"mzspark ready on {host or '127.0.0.1'}:{server.port}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:  # pragma: no cover
            pass
    serve_task = asyncio.create_task(server.serve_forever())
    await stop.wait()
    await server.close()
    if http is not None:
        await http.close()
    serve_task.cancel()
    coord.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1`: every thread's stack to the log
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # parse fallbacks are reported as SqlErrors
    from compute.render import jvm

    try:
        jvm.jar()  # the Spark Java UDFs: built now when missing or stale
    except jvm.JarUnavailable as e:
        sys.exit(f"mzspark: {e}")
    asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
