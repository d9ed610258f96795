// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The version of the Threading library.
public enum ThreadingVersion {
    /// The version as `major.minor.patch`: the release this source is (CHANGELOG.md lists what it changes).
    public static let string = "2.0.0"
}
