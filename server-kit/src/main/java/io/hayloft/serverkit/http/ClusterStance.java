package io.hayloft.serverkit.http;

import io.hayloft.format.directory.Health;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;

/**
 * The start-up check that keeps a server from running half-secured: a store, cache or raid-node
 * asks the directory's {@code GET /health} whether it has a cluster secret ({@code "secured"}) and
 * an admin token ({@code "admin"}), and refuses to start when its own configuration disagrees. It
 * retries while the directory does not answer, up to a deadline, then fails too: a server never
 * runs without knowing. The request goes through the server's own HTTP client (a {@link HealthProbe}:
 * server-kit makes no HTTP calls of its own). Stateless and thread-safe.
 */
public final class ClusterStance {

    /** How long a server waits at start-up for the directory to answer its {@code /health}. */
    public static final Duration DEFAULT_PATIENCE = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    private ClusterStance() {
    }

    /**
     * How a server fetches the directory's {@code GET /health} at its start: through its own HTTP
     * client (the client module's transport, with its TLS and its retry policy), retrying while the
     * directory does not answer 200, for at most {@code patience}. server-kit sits below the client,
     * so it names this interface and the server passes its transport's call, e.g.
     * {@code p -> transport.getPatiently(directory, "/health", p, ClusterStance.PERIOD)}.
     */
    @FunctionalInterface
    public interface HealthProbe {
        /**
         * The 200 answer's body.
         *
         * @throws Exception the last failure once {@code patience} ran out
         */
        byte[] health(Duration patience) throws Exception;
    }

    /** How often a server asks the directory's {@code /health} while it does not answer, at most. */
    public static final Duration PERIOD = Duration.ofMillis(200);

    /**
     * Checks this server's security settings against the directory's.
     *
     * @param who        what this server is, for the message ("store", "cache", "raid-node")
     * @param directory  the directory's {@code host:port}
     * @param secretKey  this server's configuration key for the cluster secret, or null when it has none to compare
     * @param secured    whether this server has that key set
     * @param adminKey   this server's configuration key for the admin token, or null when it has none to compare
     * @param admin      whether this server has that key set
     * @param probe      fetches the directory's {@code /health} (retrying for at most {@code patience})
     * @throws IllegalStateException naming the mismatch, or the directory that did not answer in time
     */
    public static void require(String who, String directory, String secretKey, boolean secured, String adminKey, boolean admin,
                               Duration patience, HealthProbe probe) throws InterruptedException {
        Health health = health(who, directory, patience, probe);
        if (secretKey != null && health.secured() != null) {
            boolean theirs = health.secured();
            if (theirs && !secured) {
                throw new IllegalStateException(who + " refuses to start: this cluster is secured (the directory at " + directory
                        + " has a clusterSecret): set " + secretKey + " on the " + who + ", the same as the directory's clusterSecret");
            }
            if (!theirs && secured) {
                throw new IllegalStateException(who + " refuses to start: " + secretKey + " is set here but the directory at "
                        + directory + " has no clusterSecret, so the cluster is open: set clusterSecret on the directory too, "
                        + "or remove " + secretKey + " here");
            }
        }
        if (adminKey != null && health.admin() != null) {
            boolean theirs = health.admin();
            if (theirs && !admin) {
                throw new IllegalStateException(who + " refuses to start: this cluster is secured (the directory at " + directory
                        + " has an adminToken): set " + adminKey + " on the " + who + ", the same as the directory's adminToken");
            }
            if (!theirs && admin) {
                throw new IllegalStateException(who + " refuses to start: " + adminKey + " is set here but the directory at "
                        + directory + " has no adminToken: set adminToken on the directory too, or remove " + adminKey + " here");
            }
        }
    }

    private static Health health(String who, String directory, Duration patience, HealthProbe probe)
            throws InterruptedException {
        try {
            return JSON.readValue(probe.health(patience), Health.class);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(who + " refuses to start: cannot check its security settings against the directory at "
                    + directory + ", whose /health did not answer within " + patience.toMillis() + " ms (last: " + e + ")", e);
        }
    }
}
