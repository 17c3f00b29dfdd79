import { defineConfig } from "vitest/config";

// The tests run against the private cluster's copy of the deployed test database
// (test/global-setup.ts); the files share it and reset it, so they run one at a time.
export default defineConfig({
  test: {
    globals: true,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
