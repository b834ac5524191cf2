package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The answer of a namespace change that may free needles (a put over an object, a delete, a part
 * uploaded again, an abort, a complete that leaves parts out): what now stands, and the id of the
 * {@link Pending#DOOMED} record that names the needles to delete (null: none).
 *
 * @param object the object as committed (put, complete), or the deleted one (delete; null if there was none)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Replaced(ObjectRecord object, String doomed) {
}
