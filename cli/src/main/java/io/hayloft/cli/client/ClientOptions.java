package io.hayloft.cli.client;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Options every client command shares: where the directory is, how long to wait, the admin token and,
 * for a cluster that speaks TLS (docs/directory-api.md "TLS"), the trust store and the client
 * certificate. The directory (one address, or a directory group's replicas comma-separated) defaults to
 * {@code $HAYLOFT_DIRECTORY} (the same form), else {@code 127.0.0.1:7000}.
 * Keystore passwords come only from the environment, never from the command line (where {@code ps}
 * would show them).
 *
 * <p>Not thread-safe (filled in by picocli, used by one command).
 */
public final class ClientOptions {
    @Option(names = {"-d", "--directory"}, paramLabel = "HOST:PORT[,HOST:PORT...]",
            defaultValue = "${env:HAYLOFT_DIRECTORY:-127.0.0.1:7000}",
            description = "Directory address, or the replicas of a directory group as a comma-separated list"
                    + " h1:p1,h2:p2,h3:p3: calls go to the group's leader (default: $HAYLOFT_DIRECTORY or ${DEFAULT-VALUE}).")
    String directory;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "Time allowed for each HTTP call (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:HAYLOFT_ADMIN_TOKEN}",
            description = "Admin token for admin calls (default: $HAYLOFT_ADMIN_TOKEN).")
    String adminToken;

    @Option(names = "--tls-trust-store", paramLabel = "FILE", defaultValue = "${env:HAYLOFT_TLS_TRUST_STORE}",
            description = "PKCS#12 trust store of a TLS cluster: call it over https (default: $HAYLOFT_TLS_TRUST_STORE;"
                    + " password from $HAYLOFT_TLS_TRUST_STORE_PASSWORD).")
    String trustStore;

    @Option(names = "--tls-key-store", paramLabel = "FILE", defaultValue = "${env:HAYLOFT_TLS_KEY_STORE}",
            description = "PKCS#12 keystore presented as client certificate to listeners with tlsClientAuth: require"
                    + " (default: $HAYLOFT_TLS_KEY_STORE; password from $HAYLOFT_TLS_KEY_STORE_PASSWORD).")
    String keyStore;

    /** A client for these options; the caller closes it. */
    public HayloftClient client() {
        checkTimeout();
        HayloftClient.Builder b = HayloftClient.builder().directory(directories().toArray(String[]::new))
                .connectTimeout(Duration.ofSeconds(Math.min(timeoutSeconds, 5)))
                .requestTimeout(Duration.ofSeconds(timeoutSeconds)).adminToken(adminToken);
        if (present(trustStore)) {
            b.trustStore(trustStore, System.getenv("HAYLOFT_TLS_TRUST_STORE_PASSWORD"));
        }
        if (present(keyStore)) {
            b.keyStore(keyStore, System.getenv("HAYLOFT_TLS_KEY_STORE_PASSWORD"));
        }
        return b.build();
    }

    /** The transport for admin calls (the operator verbs), with the same TLS settings as {@link #client()}. */
    public HttpTransport transport() {
        checkTimeout();
        HttpTransport.Builder b = HttpTransport.builder()
                .connectTimeout(Duration.ofSeconds(Math.min(timeoutSeconds, 5))).requestTimeout(Duration.ofSeconds(timeoutSeconds));
        if (present(trustStore)) {
            b.trustStore(trustStore, System.getenv("HAYLOFT_TLS_TRUST_STORE_PASSWORD"));
        }
        if (present(keyStore)) {
            b.keyStore(keyStore, System.getenv("HAYLOFT_TLS_KEY_STORE_PASSWORD"));
        }
        return b.build();
    }

    /**
     * The directory's addresses: {@code --directory} split at its commas.
     *
     * @throws IllegalArgumentException naming the option and an entry that is not host:port
     */
    public List<String> directories() {
        return AddressList.parse("--directory", directory);
    }

    private void checkTimeout() {
        if (timeoutSeconds < 1) {
            throw new IllegalArgumentException("--timeout must be >= 1 second, was " + timeoutSeconds);
        }
    }

    private static boolean present(String s) {
        return s != null && !s.isBlank();
    }
}
