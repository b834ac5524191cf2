package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.format.wire.PhotoId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * One client thread of a concurrent schedule: {@code steps} operations drawn from its own random
 * generator (seeded from the schedule's seed and the thread's index), through the schedule's one
 * shared {@link HayloftClient}, so single puts of different threads coalesce. It puts photos (single
 * puts, and batches of 2 to 8), reads needles (mostly its own, a quarter of the time any client's),
 * deletes its own photos, and reads with wrong cookies; every operation goes into the {@link History}.
 * Only this thread puts or deletes its photos, so operations on a needle from clients are sequential;
 * reads of other clients' needles, background jobs and faults race them.
 *
 * <p>Not thread-safe: run by one thread.
 */
final class ChaosClient implements Runnable {
    private final ConcurrentChaosRun run;
    private final int index;
    private final String name;
    private final Random rnd;
    /** Every needle this client made known (acknowledged or in doubt), deleted ones too. */
    private final List<PhotoId> mine = new ArrayList<>();
    /** Photos (their needles) not yet deleted with an acknowledgement. */
    private final List<List<PhotoId>> live = new ArrayList<>();

    ChaosClient(ConcurrentChaosRun run, int index) {
        this.run = run;
        this.index = index;
        this.name = "client-" + index;
        this.rnd = ConcurrentChaosRun.random(run.seed(), index);
    }

    @Override
    public void run() {
        for (int i = 0; i < run.options().steps() && !run.aborted(); i++) {
            int x = rnd.nextInt(100);
            if (x < 30) {
                put(1, false);
            } else if (x < 40) {
                put(2 + rnd.nextInt(7), true);
            } else if (x < 80) {
                get(rnd.nextInt(4) == 0);
            } else if (x < 95) {
                delete();
            } else {
                wrongCookie();
            }
        }
    }

    private void put(int photos, boolean batch) {
        List<Upload> uploads = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        List<Integer> perPhoto = new ArrayList<>();
        for (int p = 0; p < photos; p++) {
            int count = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(4) : 1;
            Set<Integer> alts = new LinkedHashSet<>();
            while (alts.size() < count) {
                alts.add(ChaosRun.drawAlt(rnd));
            }
            Upload u = Upload.empty();
            for (int a : alts) {
                byte[] d = ChaosRun.drawData(rnd);
                u.alt(a, d);
                values.add(d);
            }
            uploads.add(u);
            perPhoto.add(count);
        }
        HayloftClient client = run.client();
        Kind kind = batch ? Kind.PUT_BATCH : Kind.PUT;
        long invoke = System.nanoTime();
        List<PhotoId> ids = new ArrayList<>();
        History.Event e;
        try {
            // A single put waits on its own: puts of other threads arriving meanwhile share its write.
            List<PutResult> results = batch ? Futures.await(client.putAllUploadsAsync(uploads)) : client.put(uploads.get(0));
            results.forEach(r -> ids.add(r.id()));
            e = run.history().record(name, kind, "", ids, invoke, Outcome.OK, photos + " photos, " + values.size() + " needles");
        } catch (RuntimeException failed) {
            Throwable t = Futures.unwrap(failed);
            if (t instanceof PartialFailureException pf && pf.ids().size() == values.size()) {
                ids.addAll(pf.ids());
            }
            e = run.history().record(name, kind, "", ids, invoke, Outcome.FAILED, ConcurrentChaosRun.brief(t)
                    + (ids.isEmpty() ? "; ids unknown" : ""));
        }
        if (ids.isEmpty()) {
            return;
        }
        int i = 0;
        for (int count : perPhoto) {
            List<PhotoId> photo = new ArrayList<>();
            for (int j = 0; j < count; j++, i++) {
                run.written(ids.get(i), values.get(i), e);
                photo.add(ids.get(i));
                mine.add(ids.get(i));
            }
            live.add(photo);
        }
    }

    private void get(boolean anyClient) {
        PhotoId id = anyClient ? run.anyNeedle(rnd) : mine.isEmpty() ? null : mine.get(rnd.nextInt(mine.size()));
        if (id == null) {
            return;
        }
        byte[] expected = run.value(id);
        long invoke = System.nanoTime();
        try {
            byte[] got = run.client().get(id);
            boolean same = Arrays.equals(got, expected);
            run.history().record(name, Kind.GET, "", List.of(id), invoke, same ? Outcome.VALUE : Outcome.OTHER_BYTES,
                    same ? "" : got.length + " bytes, the put wrote " + expected.length);
        } catch (RuntimeException failed) {
            Throwable t = Futures.unwrap(failed);
            run.history().record(name, Kind.GET, "", List.of(id), invoke,
                    ChaosReads.notFound(t) ? Outcome.NOT_FOUND : Outcome.FAILED, ConcurrentChaosRun.brief(t));
        }
    }

    private void delete() {
        if (live.isEmpty()) {
            return;
        }
        int at = rnd.nextInt(live.size());
        List<PhotoId> photo = live.get(at);
        long invoke = System.nanoTime();
        try {
            run.client().delete(photo.get(0));
            run.history().record(name, Kind.DELETE, "", photo, invoke, Outcome.OK, "");
            live.remove(at);
        } catch (RuntimeException failed) {
            Throwable t = Futures.unwrap(failed);
            boolean notFound = ChaosReads.notFound(t);
            run.history().record(name, Kind.DELETE, "", photo, invoke, notFound ? Outcome.NOT_FOUND : Outcome.FAILED,
                    ConcurrentChaosRun.brief(t));
            if (notFound) {
                live.remove(at);
            }
        }
    }

    private void wrongCookie() {
        if (mine.isEmpty()) {
            return;
        }
        PhotoId n = mine.get(rnd.nextInt(mine.size()));
        PhotoId wrong = new PhotoId(n.volume(), n.key(), n.alt(), n.cookie() ^ 0x5a5a5a5aL);
        long invoke = System.nanoTime();
        try {
            byte[] got = run.client().get(wrong);
            run.history().record(name, Kind.WRONG_COOKIE_GET, "", List.of(n), invoke, Outcome.OTHER_BYTES,
                    got.length + " bytes with cookie " + wrong.cookieHex());
        } catch (RuntimeException failed) {
            Throwable t = Futures.unwrap(failed);
            run.history().record(name, Kind.WRONG_COOKIE_GET, "", List.of(n), invoke,
                    ChaosReads.notFound(t) ? Outcome.NOT_FOUND : Outcome.FAILED, ConcurrentChaosRun.brief(t));
        }
    }

    int index() {
        return index;
    }
}
