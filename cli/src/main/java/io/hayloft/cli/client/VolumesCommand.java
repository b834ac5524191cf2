package io.hayloft.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft volumes}: the logical volumes with state, size, limit and replicas.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "volumes", mixinStandardHelpOptions = true, description = "List the logical volumes.",
        subcommands = {VolumeVerbs.Seal.class, VolumeVerbs.Show.class})
public final class VolumesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            List<JsonNode> volumes = Futures.await(c.directory().volumes());
            out.printf("%-6s %-14s %12s %12s  %-30s %s%n", "ID", "STATE", "BYTES", "LIMIT", "REPLICAS", "REASON");
            for (JsonNode v : volumes) {
                List<String> replicas = new ArrayList<>();
                v.path("replicas").forEach(r -> replicas.add(r.asText()));
                out.printf("%-6s %-14s %12d %12d  %-30s %s%n", v.path("id").asText(), v.path("state").asText(),
                        v.path("sizeBytes").asLong(), v.path("limitBytes").asLong(), String.join(",", replicas),
                        v.path("reason").isNull() ? "" : v.path("reason").asText(""));
            }
        }
        out.flush();
        return 0;
    }
}
