/**
 * The Hayloft client: {@link io.hayloft.client.HayloftClient} to put, get and delete photos, with
 * the low-level {@link io.hayloft.client.DirectoryClient} and {@link io.hayloft.client.store.StoreClient}.
 *
 * <pre>{@code
 * try (HayloftClient hayloft = HayloftClient.builder().directory("127.0.0.1:7000").build()) {
 *     PutResult stored = hayloft.put(bytes);
 *     byte[] back = hayloft.get(stored.id());
 *     hayloft.delete(stored.id());
 * }
 * }</pre>
 */
package io.hayloft.client;
