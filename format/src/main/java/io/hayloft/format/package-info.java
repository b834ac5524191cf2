/**
 * The bottom of Hayloft: ids and wire records ({@code io.hayloft.format.wire}), the needle format
 * ({@code io.hayloft.format.needle}), the consistent-hash ring ({@code io.hayloft.format.ring}) and the
 * numeric wire errors of every server ({@code io.hayloft.format.errors}). No Netty, no RocksDB.
 */
package io.hayloft.format;
