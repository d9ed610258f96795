// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CThreading
import Glibc
import Testing

/// `cthr_cgroup_cpu_limit` on fixture trees: a fake `/proc/self/cgroup` and a fake cgroup mount in a temp dir.
@Suite struct CgroupTests {
    /// A temporary directory tree, removed at deinit.
    final class Fixture {
        let root: String

        init() {
            var template = Array("/tmp/cthr-cgroup-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            root = made.map { String(cString: $0) } ?? "/tmp/cthr-cgroup-missing"
        }

        deinit { _ = system("rm -rf '\(root)'") }

        /// Writes `text` to `relative` (parent directories are made).
        func write(_ relative: String, _ text: String) {
            let path = root + "/" + relative
            var parent = ""
            for component in path.split(separator: "/").dropLast() {
                parent += "/" + component
                _ = mkdir(parent, 0o755)
            }
            guard let file = fopen(path, "w") else { return }
            _ = fputs(text, file)
            fclose(file)
        }

        /// The limit read with `proc` as the cgroup file and `fs/` as the mount; (code, CPUs).
        func limit(proc: String = "proc-cgroup") -> (Int32, Int32) {
            var out: Int32 = -1
            let code = cthr_cgroup_cpu_limit(root + "/" + proc, root + "/fs", &out)
            return (code, out)
        }
    }

    @Test(arguments: [
        ("max 100000\n", Int32(0)),
        ("200000 100000\n", Int32(2)),
        ("150000 100000\n", Int32(2)),
        ("50000 100000\n", Int32(1)),
        ("1 100000", Int32(1)),
        ("6400000 100000\n", Int32(64)),
    ])
    func v2CpuMax(text: String, expected: Int32) {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "0::/app.slice/server\n")
        fixture.write("fs/app.slice/server/cpu.max", text)
        let (code, cpus) = fixture.limit()
        #expect(code == 0)
        #expect(cpus == expected)
    }

    /// The smallest quota on the way up to the root counts; levels without a file are skipped.
    @Test func v2NestedTakesTheMinimum() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "0::/outer/middle/inner\n")
        fixture.write("fs/outer/cpu.max", "300000 100000\n")
        fixture.write("fs/outer/middle/inner/cpu.max", "max 100000\n")
        #expect(fixture.limit() == (0, 3))
        fixture.write("fs/cpu.max", "100000 100000\n")
        #expect(fixture.limit() == (0, 1))
    }

    /// A container's own cgroup namespace: the path is "/" and the quota sits on the mount's root.
    @Test func v2NamespacedRoot() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "0::/\n")
        fixture.write("fs/cpu.max", "250000 100000\n")
        #expect(fixture.limit() == (0, 3))
    }

    @Test func v1CfsQuota() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n")
        fixture.write("fs/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "150000\n")
        fixture.write("fs/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n")
        #expect(fixture.limit() == (0, 2))
    }

    /// A quota of -1 is no quota; a parent's quota still counts.
    @Test func v1UnlimitedAndNested() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "1:cpu:/a/b\n")
        fixture.write("fs/cpu/a/b/cpu.cfs_quota_us", "-1\n")
        fixture.write("fs/cpu/a/b/cpu.cfs_period_us", "100000\n")
        #expect(fixture.limit() == (0, 0))
        fixture.write("fs/cpu/a/cpu.cfs_quota_us", "400000\n")
        fixture.write("fs/cpu/a/cpu.cfs_period_us", "100000\n")
        #expect(fixture.limit() == (0, 4))
    }

    /// Without a mount named after the controller list, the conventional `cpu` directory is read.
    @Test func v1FallsBackToTheCpuDirectory() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "4:cpuacct,cpu:/job\n")
        fixture.write("fs/cpu/job/cpu.cfs_quota_us", "100000\n")
        fixture.write("fs/cpu/job/cpu.cfs_period_us", "100000\n")
        #expect(fixture.limit() == (0, 1))
    }

    @Test(arguments: ["garbage\n", "max\n", "100000\n", "100000 0\n", "-5 100000\n", "12 34 56\n", ""])
    func v2GarbageIsRefused(text: String) {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "0::/x\n")
        fixture.write("fs/x/cpu.max", text)
        #expect(fixture.limit().0 == EINVAL)
    }

    @Test func v1GarbageIsRefused() {
        let fixture = Fixture()
        fixture.write("proc-cgroup", "4:cpu:/x\n")
        fixture.write("fs/cpu/x/cpu.cfs_quota_us", "lots\n")
        #expect(fixture.limit().0 == EINVAL)
        fixture.write("fs/cpu/x/cpu.cfs_quota_us", "100000\n")
        #expect(fixture.limit().0 == EINVAL)  // no period file
    }

    /// No cgroup file: its open error; no cpu line and no v2 line, or no quota file anywhere: no limit.
    @Test func missingPiecesMeanNoLimit() {
        let fixture = Fixture()
        #expect(fixture.limit().0 == ENOENT)
        fixture.write("proc-cgroup", "3:memory:/m\n")
        #expect(fixture.limit() == (0, 0))
        fixture.write("proc-cgroup", "0::/nowhere\n")
        #expect(fixture.limit() == (0, 0))
        var out: Int32 = 0
        #expect(cthr_cgroup_cpu_limit(nil, "/", &out) == EINVAL)
        #expect(cthr_cgroup_cpu_limit("/", nil, &out) == EINVAL)
        #expect(cthr_cgroup_cpu_limit("/", "/", nil) == EINVAL)
    }

    /// The effective count is at least 1 and never above the affinity count.
    @Test func effectiveCountIsBoundedByTheAffinityMask() {
        let effective = cthr_cpu_effective_count()
        #expect(effective >= 1)
        #expect(effective <= cthr_cpu_count())
    }
}
