package io.hayloft.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft stores}: the registered stores with address, rack, state and free space.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "stores", mixinStandardHelpOptions = true, description = "List the registered stores.",
        subcommands = {StoreVerbs.Fail.class, StoreVerbs.Restore.class, StoreVerbs.Drain.class})
public final class StoresCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            List<JsonNode> stores = Futures.await(c.directory().stores());
            out.printf("%-12s %-22s %-8s %-8s %14s %4s  %s%n", "ID", "ADDRESS", "RACK", "STATE", "FREE", "FAIL", "LAST ERROR");
            for (JsonNode s : stores) {
                out.printf("%-12s %-22s %-8s %-8s %14d %4d  %s%n", s.path("id").asText(), s.path("address").asText(),
                        s.path("rack").asText(), s.path("state").asText(), s.path("freeBytes").asLong(),
                        s.path("failures").asInt(), s.path("lastError").isNull() ? "" : s.path("lastError").asText(""));
            }
        }
        out.flush();
        return 0;
    }
}
