package io.hayloft.client.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The address list: parsing a configuration's comma-separated list, leader hints (a named leader
 * preferred, added when the list lacks it, at most {@value AddressList#MAX_LEARNED} learned), from
 * one thread and from many at once.
 */
class AddressListTest {

    @Test
    void parsesACommaSeparatedListAndNamesTheKeyAndTheBadEntry() {
        assertThat(AddressList.parse("directory", "h1:7000")).containsExactly("h1:7000");
        assertThat(AddressList.parse("directory", " h1:7000, h2:7001 ,10.0.0.3:7002")).containsExactly("h1:7000", "h2:7001",
                "10.0.0.3:7002");
        assertThat(AddressList.parse("directory", "[::1]:7000")).containsExactly("[::1]:7000");
        for (String bad : new String[] {"h1", "h1:7000,,h3:7000", "h1:7000,h2", "h1:0", "h1:65536", "h1:x", ":7000", "h1:7000,"}) {
            assertThatThrownBy(() -> AddressList.parse("store.directory", bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("store.directory: entry '");
        }
        assertThatThrownBy(() -> AddressList.parse("directory", "h1:7000,h2:port")).hasMessageContaining("'h2:port'");
        assertThatThrownBy(() -> AddressList.parse("directory", " ")).hasMessageContaining("directory must name");
    }

    @Test
    void aHintOfAListedAddressPrefersItAndANewOneIsAddedOnce() {
        AddressList list = AddressList.of(List.of("a:1", "http://b:2", "c:3"));
        assertThat(list.leaderHint("b:2")).isEqualTo(1); // a URL prefix is the same server
        assertThat(list.preferred()).isEqualTo(1);
        assertThat(list.leaderHint("d:4")).isEqualTo(3);
        assertThat(list.leaderHint("d:4")).isEqualTo(3);
        assertThat(list.all()).containsExactly("a:1", "http://b:2", "c:3", "d:4");
        assertThat(list.addresses()).containsExactly("a:1", "http://b:2", "c:3");
        assertThat(list.after(3)).isZero();
        assertThat(list.leaderHint("not an address")).isEqualTo(-1);
        assertThat(list.leaderHint(null)).isEqualTo(-1);
        assertThat(list.preferred()).isEqualTo(3);
    }

    @Test
    void learnedAddressesAreBoundedTheOldestMakingRoom() {
        AddressList list = AddressList.of(List.of("a:1"));
        for (int i = 0; i < AddressList.MAX_LEARNED; i++) {
            assertThat(list.leaderHint("n" + i + ":1")).isEqualTo(1 + i);
        }
        assertThat(list.leaderHint("late:1")).isEqualTo(1); // the slot of n0, the oldest
        assertThat(list.size()).isEqualTo(1 + AddressList.MAX_LEARNED);
        assertThat(list.get(1)).isEqualTo("late:1");
        assertThat(list.get(0)).isEqualTo("a:1");
    }

    @Test
    void hintsFromManyThreadsKeepTheListConsistent() throws Exception {
        List<String> configured = List.of("a:1", "b:1", "c:1");
        for (int round = 0; round < 20; round++) {
            AddressList list = AddressList.of(configured);
            int threads = 8;
            List<String> learned = new ArrayList<>();
            for (int i = 0; i < AddressList.MAX_LEARNED; i++) {
                learned.add("l" + i + ":1");
            }
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 500; i++) {
                        String hint = i % 3 == 0 ? configured.get((me + i) % 3) : learned.get((me * 7 + i) % learned.size());
                        int at = list.leaderHint(hint);
                        assertThat(at).isBetween(0, configured.size() + AddressList.MAX_LEARNED - 1);
                        if (at < configured.size()) {
                            assertThat(configured.get(at)).isEqualTo(hint);
                        }
                        // no learned address is ever replaced while at most MAX_LEARNED are hinted: the index holds
                        assertThat(list.get(at)).isEqualTo(hint);
                        list.answered(at);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
            pool.shutdown();
            List<String> all = list.all();
            assertThat(all.subList(0, 3)).isEqualTo(configured);
            assertThat(new HashSet<>(all)).as("no address twice").hasSize(all.size());
            assertThat(all.subList(3, all.size())).containsExactlyInAnyOrderElementsOf(learned);
            assertThat(list.preferred()).isBetween(0, all.size() - 1);
        }
    }
}
