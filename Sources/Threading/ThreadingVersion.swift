// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

/// The version of the Threading library.
public enum ThreadingVersion {
    /// The version as `major.minor.patch`.
    public static let string = "1.0.0"
}
