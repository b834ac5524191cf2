package io.hayloft.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.common.wire.PhotoId;
import io.hayloft.common.wire.Wire;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft stat [ID]}: with an id, where the photo lives (volume, state, replicas, alternates);
 * without, a summary of the cluster (stores and volumes by state, bytes stored).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
        description = "Show where a photo lives, or (without ID) a summary of the cluster.")
public final class StatCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "Photo id.")
    String id;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            if (id != null) {
                PhotoId photo = PhotoId.parse(id);
                Wire.Lookup l = c.stat(photo);
                boolean cookieOk = l.cookie().equalsIgnoreCase(photo.cookieHex()) && l.volume() == photo.volume();
                if (!cookieOk) {
                    throw new io.hayloft.client.PhotoNotFoundException(photo, "wrong cookie or volume");
                }
                out.println("id        " + photo);
                out.println("volume    " + l.volume() + " (" + l.volumeState() + ")");
                out.println("alts      " + l.alts());
                out.println("deleted   " + l.deleted());
                out.println("replicas  " + String.join(" ", l.replicas()));
                out.println("readFrom  " + String.join(" ", l.readFrom()));
            } else {
                List<JsonNode> stores = Futures.await(c.directory().stores());
                List<JsonNode> volumes = Futures.await(c.directory().volumes());
                Map<String, Integer> storeStates = new TreeMap<>();
                Map<String, Integer> volumeStates = new TreeMap<>();
                long bytes = 0;
                for (JsonNode s : stores) {
                    storeStates.merge(s.path("state").asText("?"), 1, Integer::sum);
                }
                for (JsonNode v : volumes) {
                    volumeStates.merge(v.path("state").asText("?"), 1, Integer::sum);
                    bytes += v.path("sizeBytes").asLong();
                }
                out.println("directory " + String.join(",", c.directory().addresses()));
                out.println("stores    " + stores.size() + " " + storeStates);
                out.println("volumes   " + volumes.size() + " " + volumeStates);
                out.println("bytes     " + bytes + " (per replica)");
            }
        }
        out.flush();
        return 0;
    }
}
