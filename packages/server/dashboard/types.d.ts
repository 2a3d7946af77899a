/**
 * The shapes the dashboard's scripts handle, for `tsc` checking them (`// @ts-check`, tsconfig.json here). The
 * public API's come from the SDK, which a test holds to the server's (client-catalogue.unit.test.ts); the
 * dashboard's own routes (`/dashboard/api/…`) are spelled here.
 */
type Task = import('@videogen/client').Task;
type TaskPage = import('@videogen/client').TaskPage;
type Model = import('@videogen/client').Model;
type ModelList = import('@videogen/client').ModelList;
type Delivery = import('@videogen/client').Delivery;
type UploadedFile = import('@videogen/client').UploadedFile;
type UsageReport = import('@videogen/client').UsageReport;
type UsageBucket = import('@videogen/client').UsageBucket;
type UsageFigures = import('@videogen/client').UsageFigures;

type Environment = 'development' | 'production';

/** What the page keeps of `GET /dashboard/api/session`. */
interface Session {
  account: { id: string; email: string };
  environment: Environment;
}

/** `GET /dashboard/api/session` and the answers of sign-in and environment changes. */
interface SessionBody extends Session {
  csrf_token: string;
}

interface MonthlyLimits {
  monthly_video_seconds: number | null;
  monthly_budget: number | null;
}

/** `GET /dashboard/api/limits`: the account's limits, the prices' currency (null: none) and this month's use. */
interface AccountLimits {
  limits: MonthlyLimits;
  currency: string | null;
  this_month: { used: UsageFigures; reserved: UsageFigures };
  /** Unix seconds: when the limits reset. */
  resets_at: number;
}

/** A key as `GET /dashboard/api/keys` lists it. */
interface ApiKeyRecord extends MonthlyLimits {
  id: string;
  name: string;
  environment: Environment;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

/** What a page's `render` gets from the router. */
interface RouteContext {
  params: string[];
  query: URLSearchParams;
  path: string;
  signal: AbortSignal;
}

/** A child `h()` appends: text, a node, or a list of them; null, undefined and false are skipped. */
type Child = Node | string | number | null | undefined | false | Child[];

/** The element `errorBox()` makes: `show(error)` and `clear()`. */
type ErrorBox = HTMLDivElement & { show(error: unknown): void; clear(): void };
