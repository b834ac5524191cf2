package io.hayloft.serverkit.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link Ports#free}: below the kernel's ephemeral range, distinct from call to call, bindable when
 * given, and never a port bound at the time (one held open here is never given again).
 */
class PortsTest {

    @Test
    void portsAreFreeDistinctAndBelowTheEphemeralRange() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress("127.0.0.1", Ports.free())); // free a moment ago: now taken
            Set<Integer> seen = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                int p = Ports.free();
                assertThat(p).isBetween(20_000, 31_999).isNotEqualTo(taken.getLocalPort());
                assertThat(seen.add(p)).as("port %d given twice", p).isTrue();
                try (ServerSocket s = new ServerSocket()) {
                    s.bind(new InetSocketAddress("127.0.0.1", p));
                }
            }
        }
    }
}
