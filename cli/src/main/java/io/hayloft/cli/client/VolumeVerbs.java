package io.hayloft.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.cli.Hayloft;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.Cluster;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft volumes seal|show ID}: mark a volume read-only; show one volume with where its
 * data really is. Stateless; one command per process.
 */
final class VolumeVerbs {
    private VolumeVerbs() {
    }

    @Command(name = "seal", mixinStandardHelpOptions = true,
            description = "Mark a volume READ_ONLY: no more writes are assigned to it (puts go to other volumes).")
    static final class Seal extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "logical volume id")
        int volume;
        @Option(names = "--reason", paramLabel = "TEXT", description = "why, recorded as the volume's reason (default: operator)")
        String reason;

        @Override
        int run(Cluster cluster, PrintWriter out) throws Exception {
            VolumeInfo v = cluster.markReadOnly(volume, reason);
            out.printf("volume %d %s: %s%n", v.id(), v.state(), v.reason() == null ? "" : v.reason());
            return 0;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = {
            "One volume: state, size, reason, delete counters; each replica with its store and whether the store holds it,",
            "or each stripe's blocks with their store and health (present, length and CRC32C from the store's listing).",
            "Exit 1 when a replica or block is missing, damaged or on a store that is down."})
    static final class Show extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "logical volume id")
        int volume;
        @Option(names = "--json", description = "print one JSON object (for scripts) instead of tables")
        boolean json;

        @Override
        int run(Cluster cluster, PrintWriter out) throws Exception {
            VolumeInfo v = cluster.volume(volume);
            Map<String, StoreInfo> stores = new HashMap<>();
            for (StoreInfo s : cluster.storeInfos()) {
                stores.put(s.id(), s);
            }
            long now = System.currentTimeMillis();
            List<String> problems = new ArrayList<>();
            ObjectNode report = JSON.createObjectNode();
            report.set("volume", JSON.valueToTree(v)); // the record as the directory answered it
            ArrayNode replicas = report.putArray("replicas");
            for (String id : v.replicas()) {
                StoreInfo s = stores.get(id);
                ObjectNode row = replicas.addObject().put("store", id);
                String holds;
                if (s == null) {
                    holds = "unknown store";
                } else {
                    row.put("address", text(s.address())).put("state", text(s.state()))
                            .put("rack", text(s.rack())).put("heartbeatAgeMillis", now - s.lastHeartbeatMillis());
                    try {
                        holds = cluster.storeVolume(s.address(), volume) != null ? "yes" : "no";
                    } catch (IOException e) {
                        holds = "unreachable";
                    }
                }
                row.put("holds", holds);
                if (!"yes".equals(holds) || !serving(s)) {
                    problems.add("replica on " + id + ": " + (s == null ? "unknown store" : "store " + text(s.state())
                            + ", holds it: " + holds));
                }
            }
            StripeMap map = cluster.stripeMap(volume);
            if (map != null) {
                report.set("stripes", stripes(cluster, map, stores, problems));
            } else if (v.replicas().isEmpty()) {
                problems.add("no replica and no stripe map");
            }
            report.put("healthy", problems.isEmpty());
            ArrayNode p = report.putArray("problems");
            problems.forEach(p::add);
            if (json) {
                out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(report));
            } else {
                print(out, v, report, map);
            }
            return problems.isEmpty() ? 0 : Hayloft.EXIT_FAILED;
        }

        private static boolean serving(StoreInfo store) {
            return store != null && store.state() != null && store.state().serving();
        }

        /** A field as text, as Jackson's {@code asText()} gives it ("null" for null). */
        private static String text(Object o) {
            return String.valueOf(o);
        }

        /** Each block's health from its store's listing (one listing per store): ok, missing, corrupt, store down. */
        private ObjectNode stripes(Cluster cluster, StripeMap map, Map<String, StoreInfo> stores, List<String> problems) {
            Map<String, Map<String, Cluster.BlockInfo>> listings = new HashMap<>();
            ObjectNode out = JSON.createObjectNode().put("job", map.job()).put("codec", map.codec()).put("k", map.k())
                    .put("r", map.r()).put("blockSize", map.blockSize()).put("volumeBytes", map.volumeBytes())
                    .put("status", map.status());
            boolean committed = StripeMap.COMMITTED.equals(map.status());
            ArrayNode stripes = out.putArray("stripes");
            for (StripeMap.Stripe s : map.stripes()) {
                ArrayNode blocks = stripes.addObject().put("stripe", s.index()).putArray("blocks");
                for (int u = 0; u < s.blocks().size(); u++) {
                    StripeMap.Block b = s.blocks().get(u);
                    String health = committed ? health(cluster, listings, stores, b.store(), b.name(), b.length(), b.crc32c()) : "planned";
                    blocks.addObject().put("unit", u).put("store", b.store()).put("storeState", state(stores, b.store()))
                            .put("name", b.name()).put("length", b.length()).put("health", health);
                    if (committed && !health.equals("ok")) {
                        problems.add("block " + s.index() + "/" + u + " " + b.name() + " on " + b.store() + ": " + health);
                    }
                }
            }
            if (map.index() != null) {
                ArrayNode holders = out.putObject("index").put("name", map.index().name()).putArray("holders");
                for (String h : map.index().holders()) {
                    String health = committed ? health(cluster, listings, stores, h, map.index().name(), map.index().length(),
                            map.index().crc32c()) : "planned";
                    holders.addObject().put("store", h).put("storeState", state(stores, h)).put("health", health);
                    if (committed && !health.equals("ok")) {
                        problems.add("needle index " + map.index().name() + " on " + h + ": " + health);
                    }
                }
            }
            return out;
        }

        private static String state(Map<String, StoreInfo> stores, String id) {
            StoreInfo s = stores.get(id);
            return s == null ? "UNKNOWN" : text(s.state());
        }

        private static String health(Cluster cluster, Map<String, Map<String, Cluster.BlockInfo>> listings,
                                     Map<String, StoreInfo> stores, String store, String name, long length, long crc) {
            StoreInfo s = stores.get(store);
            if (!serving(s)) {
                return "store " + state(stores, store);
            }
            Map<String, Cluster.BlockInfo> listing = listings.computeIfAbsent(store, id -> {
                try {
                    return cluster.listBlocks(s.address());
                } catch (IOException e) {
                    return null;
                }
            });
            if (listing == null) {
                return "store unreachable";
            }
            Cluster.BlockInfo got = listing.get(name);
            if (got == null) {
                return "missing";
            }
            if (got.length() != length) {
                return "wrong length " + got.length() + " (want " + length + ")";
            }
            return got.crc32c() == crc ? "ok" : "CRC32C mismatch";
        }

        private static void print(PrintWriter out, VolumeInfo v, JsonNode report, StripeMap map) {
            out.printf(Locale.ROOT, "volume %d  %s  %d of %d bytes%s%n", v.id(), text(v.state()), v.sizeBytes(), v.limitBytes(),
                    v.reason() == null || v.reason().isEmpty() ? "" : "  reason: " + v.reason());
            out.printf(Locale.ROOT, "deleted since encoded: %d photos, %d needles%n", v.deletedPhotos(), v.deletedNeedles());
            if (!report.path("replicas").isEmpty()) {
                out.printf("%-12s %-22s %-9s %-8s %10s  %s%n", "REPLICA", "ADDRESS", "STATE", "RACK", "HEARTBEAT", "HOLDS");
                for (JsonNode r : report.path("replicas")) {
                    out.printf(Locale.ROOT, "%-12s %-22s %-9s %-8s %9.1fs  %s%n", r.path("store").asText(), r.path("address").asText("-"),
                            r.path("state").asText("-"), r.path("rack").asText("-"), r.path("heartbeatAgeMillis").asLong() / 1000.0,
                            r.path("holds").asText());
                }
            }
            if (map != null) {
                out.printf(Locale.ROOT, "stripe map %s: job %s, %s(%d,%d), blocks of %d bytes, %d stripes%n", map.status(), map.job(),
                        map.codec(), map.k(), map.r(), map.blockSize(), map.stripes().size());
                out.printf("%-6s %-4s %-12s %-9s %-34s %s%n", "STRIPE", "UNIT", "STORE", "STATE", "BLOCK", "HEALTH");
                for (JsonNode s : report.path("stripes").path("stripes")) {
                    for (JsonNode b : s.path("blocks")) {
                        out.printf("%-6d %-4d %-12s %-9s %-34s %s%n", s.path("stripe").asInt(), b.path("unit").asInt(),
                                b.path("store").asText(), b.path("storeState").asText(), b.path("name").asText(), b.path("health").asText());
                    }
                }
                for (JsonNode h : report.path("stripes").path("index").path("holders")) {
                    out.printf("%-6s %-4s %-12s %-9s %-34s %s%n", "index", "-", h.path("store").asText(), h.path("storeState").asText(),
                            report.path("stripes").path("index").path("name").asText(), h.path("health").asText());
                }
            }
            if (report.path("healthy").asBoolean()) {
                out.println("healthy");
            } else {
                out.println("UNHEALTHY: " + report.path("problems").size() + " problem(s)");
                for (JsonNode p : report.path("problems")) {
                    out.println("  " + p.asText());
                }
            }
        }
    }
}
