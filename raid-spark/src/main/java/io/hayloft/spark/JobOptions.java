package io.hayloft.spark;

import io.hayloft.client.http.AddressList;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidLease;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The command-line options every spark-submit entry point ({@link SparkEncode}, {@link SparkRepair})
 * shares: how the driver and the executors reach the cluster. The {@link RaidConfig} they fill travels
 * with every task, so file paths in it (TLS stores) must name the same file on the driver and on every
 * executor (YARN {@code --files} puts them in each container's working directory; on Kubernetes mount
 * one secret at the same path in the driver and executor pods). Stateless.
 *
 * <pre>
 * --directory H:P[,H:P...]  the directory, or its group's replicas comma-separated (default 127.0.0.1:7000)
 * --admin-token T            the directory's admin token
 * --admin-token-file F       ... read from a file (first line), kept off the process list
 * --request-timeout-ms MS    deadline of one request (default 10000)
 * --transfer-bytes B         bytes per HTTP request when copying (default 1048576)
 * --spool-dir DIR            where stripe tasks spool (default the executor's java.io.tmpdir)
 * --tls-trust-store F [--tls-trust-store-password P] [--tls-key-store F --tls-key-store-password P]
 * </pre>
 */
final class JobOptions {

    /** The usage text of the shared options. */
    static final String USAGE = "--directory H:P[,H:P...] [--admin-token T | --admin-token-file F] [--request-timeout-ms MS]"
            + " [--transfer-bytes B] [--spool-dir DIR] [--tls-trust-store F [--tls-trust-store-password P]]"
            + " [--tls-key-store F --tls-key-store-password P]";

    /** How long a Spark driver's raid lease lasts without renewal (renewed every third of it), as the CLI's. */
    static final long LEASE_TTL_MILLIS = 60_000;

    private JobOptions() {
    }

    /**
     * Takes the cluster's raid lease for this driver ({@code raid-spark@host:pid}): one raid-node at a
     * time deletes and rewrites blocks, so this driver's recovery never sweeps the blocks of a daemon's
     * job in flight, nor the daemon's this driver's.
     *
     * @throws io.hayloft.raid.RaidLease.HeldException naming the holder when a daemon or a command has it
     */
    static RaidLease lease(Cluster cluster) throws IOException {
        String holder = RaidLease.commandHolder().replaceFirst("^raid-cli@", "raid-spark@");
        return RaidLease.acquire(cluster, holder, LEASE_TTL_MILLIS);
    }

    /**
     * Applies the shared option at {@code argv[i]} (and its value) to {@code c}.
     *
     * @return the index of the last argument consumed, or -1 when {@code argv[i]} is not a shared option
     * @throws IllegalArgumentException naming the option when its value is missing or bad
     */
    static int apply(RaidConfig c, String[] argv, int i) {
        String arg = argv[i];
        switch (arg) {
            case "--directory" -> c.directory = String.join(",", AddressList.parse(arg, value(argv, i + 1, arg)));
            case "--admin-token" -> c.adminToken = value(argv, i + 1, arg);
            case "--admin-token-file" -> c.adminToken = firstLine(value(argv, i + 1, arg), arg);
            case "--request-timeout-ms" -> c.requestTimeoutMillis = longNumber(argv, i + 1, arg);
            case "--transfer-bytes" -> c.transferBytes = number(argv, i + 1, arg);
            case "--spool-dir" -> c.spoolDir = value(argv, i + 1, arg);
            case "--tls-trust-store" -> c.tlsTrustStore = value(argv, i + 1, arg);
            case "--tls-trust-store-password" -> c.tlsTrustStorePassword = value(argv, i + 1, arg);
            case "--tls-key-store" -> c.tlsKeyStore = value(argv, i + 1, arg);
            case "--tls-key-store-password" -> c.tlsKeyStorePassword = value(argv, i + 1, arg);
            default -> {
                return -1;
            }
        }
        return i + 1;
    }

    private static String firstLine(String file, String option) {
        try {
            String token = Files.readString(Path.of(file), StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
            if (token.isEmpty()) {
                throw new IllegalArgumentException(option + " '" + file + "' is empty");
            }
            return token;
        } catch (IOException e) {
            throw new IllegalArgumentException(option + " '" + file + "' cannot be read: " + e.getMessage());
        }
    }

    static String value(String[] argv, int i, String option) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return argv[i];
    }

    static String numeric(String[] argv, int i, String option) {
        String v = value(argv, i, option);
        if (!v.matches("-?[0-9]+")) {
            throw new IllegalArgumentException(option + " must be a number, was '" + v + "'");
        }
        return v;
    }

    static long longNumber(String[] argv, int i, String option) {
        try {
            return Long.parseLong(numeric(argv, i, option));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " is out of range: '" + argv[i] + "'");
        }
    }

    static int number(String[] argv, int i, String option) {
        try {
            return Integer.parseInt(numeric(argv, i, option));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " is out of range: '" + argv[i] + "'");
        }
    }
}
