package io.hayloft.cli.raid;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cli.Hayloft;
import io.hayloft.cli.ec.SizeConverter;
import io.hayloft.client.http.HttpTransport;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutionException;

/** Prints a running raid-node's {@code GET /status} (docs/raid-api.md) for {@code hayloft raid status --raid-node}. Stateless. */
final class RaidStatus {
    private RaidStatus() {
    }

    static int print(String raidNode, PrintWriter out) throws Exception {
        // host:port, or a URL prefix (https://host:port) for a raid-node with TLS.
        HttpTransport http = HttpTransport.builder().connectTimeout(Duration.ofSeconds(10)).requestTimeout(Duration.ofSeconds(30)).build();
        HttpResponse<byte[]> r;
        try {
            r = http.call(raidNode, "GET /status", http.request(http.uri(raidNode, "/status")).GET().build(), false,
                    s -> true, HttpTransport.TYPED).get();
        } catch (ExecutionException e) {
            throw new IOException("raid-node " + raidNode + " cannot be reached: " + e.getCause(), e.getCause());
        }
        String body = new String(r.body(), StandardCharsets.UTF_8);
        if (r.statusCode() != 200) {
            out.println("raid-node " + raidNode + " answered " + r.statusCode() + ": " + body);
            return Hayloft.EXIT_FAILED;
        }
        JsonNode s = new ObjectMapper().readTree(body);
        JsonNode p = s.get("policy");
        out.printf(Locale.ROOT, "policy:           version %d (%s)%s%n", p.get("version").asInt(),
                p.get("file").isNull() ? "defaults" : p.get("file").asText(),
                p.get("lastError").isNull() ? "" : "; LAST RELOAD FAILED: " + p.get("lastError").asText());
        out.println("encode backlog:   " + s.path("backlog").size() + " volumes " + s.path("backlog"));
        out.println("running jobs:     " + (s.get("jobs").isEmpty() ? "none" : s.get("jobs").size()));
        for (JsonNode j : s.get("jobs")) {
            long done = j.get("bytesDone").asLong();
            long total = j.get("bytesTotal").asLong();
            out.printf(Locale.ROOT, "  %s%s at %s: %s / %s (%d%%)%n", j.get("kind").asText(),
                    j.has("volume") ? " volume " + j.get("volume").asInt() : "", j.get("step").asText(),
                    SizeConverter.format(done), SizeConverter.format(total), total == 0 ? 0 : 100 * done / total);
        }
        JsonNode st = s.path("stripes");
        out.printf(Locale.ROOT, "stripes:          %d healthy, %d damaged, %d planned%n", st.path("healthy").asLong(),
                st.path("damaged").asLong(), st.path("planned").asLong());
        out.printf(Locale.ROOT, "blocks:           %d missing, %d corrupt%n", s.path("blocksMissing").asLong(),
                s.path("blocksCorrupt").asLong());
        JsonNode rep = s.get("repair");
        out.printf(Locale.ROOT, "repair rate:      %s/s over the last %d s; %d blocks rebuilt, %.2f bytes read per repaired byte%n",
                SizeConverter.format((long) rep.get("rateBytesPerSecond").asDouble()), rep.get("windowSeconds").asLong(),
                rep.get("blocksRebuilt").asLong(), rep.get("bytesReadPerRepairedByte").asDouble());
        JsonNode sc = s.get("scrub");
        out.printf(Locale.ROOT, "scrub:            cycle %d, %s / %s, %d corrupt blocks found%n", sc.get("cycles").asLong(),
                SizeConverter.format(sc.get("cycleBytesDone").asLong()), SizeConverter.format(sc.get("cycleBytesTotal").asLong()),
                sc.get("corruptFound").asLong());
        return 0;
    }
}
