package io.hayloft.serverkit.http;

import io.hayloft.format.directory.Health;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The start-up check that keeps a server from running half-secured: a store, cache or raid-node
 * asks the directory's {@code GET /health} whether it has a cluster secret ({@code "secured"}) and
 * an admin token ({@code "admin"}), and refuses to start when its own configuration disagrees. It
 * retries while the directory does not answer, up to a deadline, then fails too: a server never
 * runs without knowing. Stateless and thread-safe.
 */
public final class ClusterStance {

    /** How long a server waits at start-up for the directory to answer its {@code /health}. */
    public static final Duration DEFAULT_PATIENCE = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    private ClusterStance() {
    }

    /**
     * Checks this server's security settings against the directory's.
     *
     * @param who        what this server is, for the message ("store", "cache", "raid-node")
     * @param directory  the directory's {@code host:port}
     * @param secretKey  this server's configuration key for the cluster secret, or null when it has none to compare
     * @param secured    whether this server has that key set
     * @param adminKey   this server's configuration key for the admin token, or null when it has none to compare
     * @param admin      whether this server has that key set
     * @throws IllegalStateException naming the mismatch, or the directory that did not answer in time
     */
    public static void require(String who, String directory, String secretKey, boolean secured, String adminKey, boolean admin,
                               Duration patience) throws InterruptedException {
        require(who, directory, secretKey, secured, adminKey, admin, patience, null);
    }

    /**
     * As {@link #require(String, String, String, boolean, String, boolean, Duration)}, asking the
     * directory over HTTPS when {@code ssl} is not null (the server's {@code Tls.Settings.clientContext()}).
     */
    public static void require(String who, String directory, String secretKey, boolean secured, String adminKey, boolean admin,
                               Duration patience, javax.net.ssl.SSLContext ssl) throws InterruptedException {
        Health health = health(who, directory, patience, ssl);
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

    private static Health health(String who, String directory, Duration patience, javax.net.ssl.SSLContext ssl)
            throws InterruptedException {
        HttpClient.Builder hb = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2));
        if (ssl != null) {
            hb.sslContext(ssl);
        }
        HttpClient http = hb.build();
        HttpRequest req = HttpRequest.newBuilder(URI.create((ssl == null ? "http://" : "https://") + directory + "/health"))
                .timeout(Duration.ofSeconds(5))
                .GET().build();
        long deadline = System.nanoTime() + patience.toNanos();
        String last;
        while (true) {
            try {
                HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() == 200) {
                    return JSON.readValue(r.body(), Health.class);
                }
                last = "answered " + r.statusCode();
            } catch (java.io.IOException e) {
                last = e.toString();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(who + " refuses to start: cannot check its security settings against the directory at "
                        + directory + ", whose /health did not answer within " + patience.toMillis() + " ms (last: " + last + ")");
            }
            Thread.sleep(200); // a retry period, not a synchronisation: the directory may still be starting
        }
    }
}
