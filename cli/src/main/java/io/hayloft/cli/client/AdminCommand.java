package io.hayloft.cli.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cli.Hayloft;
import io.hayloft.raid.Cluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * The operator verbs under {@code hayloft volumes} and {@code hayloft stores} (seal, show, fail,
 * restore, drain): the client options may be given before the verb (to the list command) or after
 * it; an error is a message on stderr, exit 2 when the directory says the input is bad (unknown id,
 * 400) and 1 when the operation failed.
 *
 * <p>Not thread-safe (one command run).
 */
abstract class AdminCommand implements Callable<Integer> {
    static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    /** The options in force: {@link #client}, or those given before the verb (set by {@link #call()}). */
    ClientOptions options;

    /** The verb itself; exceptions are turned into messages and exit codes by {@link #call()}. */
    abstract int run(Cluster cluster, PrintWriter out) throws Exception;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ClientOptions o = effective();
        options = o;
        if (o.timeoutSeconds < 1) {
            throw new IllegalArgumentException("--timeout must be >= 1 second, was " + o.timeoutSeconds);
        }
        try {
            return run(new Cluster(String.join(",", o.directories()), o.adminToken, Duration.ofSeconds(o.timeoutSeconds),
                    o.transport()), out);
        } catch (Cluster.HttpStatusException e) {
            err.println("hayloft: " + describe(e));
            return e.status() == 404 || e.status() == 400 ? Hayloft.EXIT_USAGE : Hayloft.EXIT_FAILED;
        } catch (IOException e) {
            err.println("hayloft: " + e.getMessage());
            return Hayloft.EXIT_FAILED;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** The options given after the verb, else those given before it (to {@code volumes} or {@code stores}). */
    private ClientOptions effective() {
        Object parent = spec.parent() == null ? null : spec.parent().userObject();
        ClientOptions before = parent instanceof VolumesCommand v ? v.client : parent instanceof StoresCommand s ? s.client : null;
        if (before == null) {
            return client;
        }
        var parsed = spec.commandLine().getParseResult();
        ClientOptions o = new ClientOptions();
        o.directory = parsed.hasMatchedOption("--directory") ? client.directory : before.directory;
        o.timeoutSeconds = parsed.hasMatchedOption("--timeout") ? client.timeoutSeconds : before.timeoutSeconds;
        o.adminToken = parsed.hasMatchedOption("--admin-token") ? client.adminToken : before.adminToken;
        o.trustStore = parsed.hasMatchedOption("--tls-trust-store") ? client.trustStore : before.trustStore;
        o.keyStore = parsed.hasMatchedOption("--tls-key-store") ? client.keyStore : before.keyStore;
        return o;
    }

    /** A server's error as its code name and message ({@code UNKNOWN_VOLUME: no logical volume 7}) when it sent one. */
    static String describe(Cluster.HttpStatusException e) {
        return e.serverMessage() != null ? e.errorName() + ": " + e.serverMessage() : e.getMessage();
    }
}
