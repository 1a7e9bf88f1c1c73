# mzspark: the server (Spark driver, local master by default) in one image.
#   docker build -t mzspark .
#   docker run -p 6875:6875 -v mzdata:/mzdata mzspark
#   psql -h 127.0.0.1 -p 6875 -U materialize materialize
# On a Spark standalone cluster (server + master + 2 workers, one data volume): docker-compose.yml
FROM python:3.11-slim-bookworm

# (slim images lack the man dir the JRE post-install links into; the JDK's javac builds the
# project's Spark Java UDFs, build/jvm/mzspark-udfs.jar, below)
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jdk-headless procps \
    && rm -rf /var/lib/apt/lists/*

# PySpark finds `java` on PATH (no arch-specific JAVA_HOME needed).
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
RUN pip install . && python -m compute.render.jvm

VOLUME /mzdata
EXPOSE 6875
CMD ["python", "-m", "server", "--listen-addr", "0.0.0.0:6875", "--data-dir", "/mzdata"]
