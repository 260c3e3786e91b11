// Reading a Kubernetes list in pages, written once: every full list in the app (Nodes, pods,
// PodDisruptionBudgets, custom objects, the watch caches' relists) follows `continue` tokens through
// here, so a large cluster never arrives as one huge response. Each page is projected as it arrives, so
// only the projected items are kept, never every raw page at once.

/** Items per request when the caller does not say. */
export const LIST_PAGE_SIZE = 500;

export interface ListPage<Raw> {
  items: Raw[];
  /** The list's resourceVersion: where a watch resumes from. */
  resourceVersion: string | undefined;
  /** Where the next page starts; undefined on the last page. */
  continueToken: string | undefined;
}

/**
 * A page of a Kubernetes list response. client-node's typed models name the token `_continue`; the
 * custom objects API returns the plain JSON, where it is `continue`.
 */
export function pageOf<Raw>(list: {
  items: Raw[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}): ListPage<Raw> {
  return {
    items: list.items,
    resourceVersion: list.metadata?.resourceVersion,
    continueToken: list.metadata?._continue || list.metadata?.continue || undefined,
  };
}

/** Every item of a list, each projected as its page arrives, with the last page's resourceVersion. */
export async function listAllPages<Raw, Item>(
  listPage: (continueToken: string | undefined, limit: number) => Promise<ListPage<Raw>>,
  project: (raw: Raw) => Item,
  pageSize = LIST_PAGE_SIZE,
): Promise<{ items: Item[]; resourceVersion: string | undefined }> {
  const items: Item[] = [];
  let token: string | undefined;
  let resourceVersion: string | undefined;
  do {
    const page = await listPage(token, pageSize);
    for (const raw of page.items) items.push(project(raw));
    resourceVersion = page.resourceVersion ?? resourceVersion;
    token = page.continueToken || undefined;
  } while (token);
  return { items, resourceVersion };
}
