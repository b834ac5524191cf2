package io.hayloft.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A store's registration ({@link DirectoryClient#register}) outlasts a directory that is slow or busy
 * at start: a first heartbeat that times out, then a 503, then an answer, registers; a directory that
 * never takes it fails the registration with the last error once the patience has run out.
 */
class DirectoryRegistrationTest {
    private static final Wire.Heartbeat HB = new Wire.Heartbeat("store-1", "127.0.0.1:1", "r1", 100, 50, List.of());

    private static HttpTransport transport() {
        return transport(Duration.ofMillis(300));
    }

    private static HttpTransport transport(Duration requestTimeout) {
        return HttpTransport.builder().connectTimeout(Duration.ofSeconds(1)).requestTimeout(requestTimeout)
                .retries(3, Duration.ofMillis(1), Duration.ofMillis(20)).build();
    }

    @Test
    void aRegistrationOutlastsATimeoutAndABusyAnswer() throws IOException {
        AtomicInteger n = new AtomicInteger();
        try (RawServer directory = new RawServer(r -> switch (n.incrementAndGet()) {
            case 1 -> null; // never answers: the attempt times out
            case 2 -> RawServer.response(503, "application/json",
                    "{\"error\":{\"code\":231,\"name\":\"NO_LEADER\",\"message\":\"election\"}}");
            default -> RawServer.response(200, "application/json", "{\"storeId\":\"store-1\",\"state\":\"UP\",\"deleteHeads\":{}}");
        })) {
            DirectoryClient client = new DirectoryClient(transport(), List.of(directory.address()), null);
            Wire.HeartbeatAnswer answer = Futures.await(client.register(HB, Duration.ofSeconds(30)));
            assertThat(answer.state()).isEqualTo(StoreState.UP);
            assertThat(directory.requests()).hasSizeGreaterThanOrEqualTo(3);
            assertThat(directory.requests()).allSatisfy(r -> assertThat(r.line()).startsWith("POST /v1/heartbeat "));
        }
    }

    @Test
    void aDirectoryThatNeverTakesItFailsTheRegistrationWithTheLastErrorAfterThePatience() throws IOException {
        try (RawServer directory = new RawServer(r -> RawServer.response(503, "application/json",
                "{\"error\":{\"code\":231,\"name\":\"NO_LEADER\",\"message\":\"election\"}}"))) {
            // Attempts never time out here (a stalled last attempt would make its timeout the last error, rightly):
            // every failure is the directory's answer, so the last one is NO_LEADER.
            DirectoryClient client = new DirectoryClient(transport(Duration.ofSeconds(10)), List.of(directory.address()), null);
            Throwable t = catchThrowable(() -> Futures.await(client.register(HB, Duration.ofMillis(500))));
            assertThat(t).isInstanceOf(DirectoryException.class);
            assertThat(((DirectoryException) t).errorName()).isEqualTo("NO_LEADER");
            assertThat(directory.requests()).hasSizeGreaterThan(1);
        }
    }

    @Test
    void aRefusalThatNoRetryCanChangeIsNotRetried() throws IOException {
        try (RawServer directory = new RawServer(r -> RawServer.response(401, "application/json",
                "{\"error\":{\"code\":205,\"name\":\"UNAUTHORIZED\",\"message\":\"token\"}}"))) {
            DirectoryClient client = new DirectoryClient(transport(), List.of(directory.address()), null);
            Throwable t = catchThrowable(() -> Futures.await(client.register(HB, Duration.ofSeconds(30))));
            assertThat(((DirectoryException) t).code()).isEqualTo(DirectoryException.UNAUTHORIZED);
            assertThat(directory.requests()).hasSize(1);
        }
    }
}
