package io.hayloft.cli.client;

import io.hayloft.client.HayloftClient;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * Options every client command shares: where the directory is and how long to wait. The directory
 * defaults to {@code $HAYLOFT_DIRECTORY}, else {@code 127.0.0.1:7000}.
 *
 * <p>Not thread-safe (filled in by picocli, used by one command).
 */
public final class ClientOptions {
    @Option(names = {"-d", "--directory"}, paramLabel = "HOST:PORT",
            defaultValue = "${env:HAYLOFT_DIRECTORY:-127.0.0.1:7000}",
            description = "Directory address (default: $HAYLOFT_DIRECTORY or ${DEFAULT-VALUE}).")
    String directory;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "Time allowed for each HTTP call (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:HAYLOFT_ADMIN_TOKEN}",
            description = "Admin token for admin calls (default: $HAYLOFT_ADMIN_TOKEN).")
    String adminToken;

    /** A client for these options; the caller closes it. */
    public HayloftClient client() {
        if (timeoutSeconds < 1) {
            throw new IllegalArgumentException("--timeout must be >= 1 second, was " + timeoutSeconds);
        }
        return HayloftClient.builder().directory(directory.split(","))
                .connectTimeout(Duration.ofSeconds(Math.min(timeoutSeconds, 5)))
                .requestTimeout(Duration.ofSeconds(timeoutSeconds)).adminToken(adminToken).build();
    }
}
