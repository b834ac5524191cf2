package io.hayloft.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.WriteAuthorizer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreServer#crash()} and {@link StoreServer#close()} after a power cut of the server's
 * {@link SimulatedDisk}: neither throws, neither changes the disk, and a server started on the same
 * disk serves every acknowledged write (what the chaos checker does).
 */
class StoreServerPowerCutTest {
    private static StoreConfig config() {
        StoreConfig c = StoreServerTest.config(Path.of("/sim/server"));
        c.dataDirs = List.of("/sim/server");
        c.storeId = "power-cut-store";
        return c;
    }

    private static String listing(SimulatedDisk d) throws Exception {
        StringBuilder b = new StringBuilder();
        for (String f : d.list(Path.of("/sim/server"))) {
            b.append(f).append('=').append(d.size(Path.of("/sim/server", f))).append(';');
        }
        return b.toString();
    }

    @Test
    void crashOrCloseAfterAPowerCutThrowsNothingWritesNothingAndLosesNoAcknowledgedWrite() throws Exception {
        for (boolean crash : new boolean[] {true, false}) {
            SimulatedDisk disk = new SimulatedDisk(crash ? 1 : 2);
            StoreServer server = StoreServer.start(config(), WriteAuthorizer.ALLOW_ALL, disk);
            TestHttp http = new TestHttp(server.port());
            assertThat(http.post("/admin/volumes/1", null).status()).isEqualTo(201);
            for (int i = 0; i < 20; i++) {
                assertThat(http.put("/1/" + i + "/0?cookie=abc", StoreServerTest.data(100 + i * 50, i)).status()).isEqualTo(201);
            }
            assertThat(http.delete("/1/3/0?cookie=abc").status()).isIn(200, 204);
            disk.powerCut();
            String atTheCut = listing(disk);
            if (crash) {
                server.crash();
            } else {
                server.close();
            }
            assertThat(listing(disk)).as("the disk after %s", crash ? "crash()" : "close()").isEqualTo(atTheCut);
            StoreServer again = StoreServer.start(config(), WriteAuthorizer.ALLOW_ALL, disk);
            try {
                TestHttp h = new TestHttp(again.port());
                for (int i = 0; i < 20; i++) {
                    TestHttp.Reply r = h.get("/1/" + i + "/0?cookie=abc");
                    if (i == 3) {
                        assertThat(r.status()).isEqualTo(404);
                    } else {
                        assertThat(r.status()).as("needle %d", i).isEqualTo(200);
                        assertThat(r.body()).as("needle %d", i).isEqualTo(StoreServerTest.data(100 + i * 50, i));
                    }
                }
                assertThat(h.put("/1/100/0?cookie=abc", StoreServerTest.data(10, 100)).status()).isEqualTo(201);
            } finally {
                again.close();
            }
        }
    }
}
