#!/bin/sh
# Creates Temporal's two PostgreSQL databases and brings their schemas to the server's version,
# as the tests do (test/helpers/temporal-postgres.ts) and docker-compose.yml's temporal-schema
# service does. temporal-sql-tool reads the connection from SQL_PLUGIN (postgres12), SQL_HOST,
# SQL_PORT, SQL_USER, SQL_PASSWORD. TEMPORAL_SCHEMA_DIR: the server's schema/postgresql/v12
# (in the Go module cache here, /etc/temporal/schema/postgresql/v12 in the admin-tools image).
set -eu
tool="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"
: "${TEMPORAL_SCHEMA_DIR:?set TEMPORAL_SCHEMA_DIR to the server version's schema/postgresql/v12}"
for pair in temporal:temporal temporal_visibility:visibility; do
  db="${pair%%:*}"
  schema="${pair#*:}"
  # A second run (compose up again) finds the database: the schema update below is what matters.
  "$tool" --db "$db" create-database 2>/dev/null || echo "setup-schema: database $db exists"
  "$tool" --db "$db" setup-schema -v 0.0
  "$tool" --db "$db" update-schema -d "$TEMPORAL_SCHEMA_DIR/$schema/versioned"
done
