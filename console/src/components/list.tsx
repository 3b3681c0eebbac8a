/** The lists' parts: their state (search, page, page size), the search box, the pager, the scrolling table. */
import { type ReactNode, useId, useState } from 'react';
import type { ListQuery } from '../api/resources';
import { queryParam } from '../router';
import { counted } from './ui';

/** A list's search, order and paging (the API's page/pageSize/q/sort). */
export type ListState<S extends string = string> = Required<Pick<ListQuery<S>, 'q' | 'page' | 'pageSize' | 'sort'>> & {
  setQ: (q: string) => void;
  setPage: (p: number) => void;
  setPageSize: (n: number) => void;
  setSort: (s: S) => void;
};

/** The search starts from the URL's `?q=`; a new search, order or size starts at page 1. */
export function useListState<S extends string>(defaultSort: S, defaultPageSize = 25): ListState<S> {
  const [q, setQuery] = useState(() => queryParam('q'));
  const [page, setPage] = useState(1);
  const [pageSize, setSize] = useState(defaultPageSize);
  const [sort, setOrder] = useState<S>(defaultSort);
  return {
    q,
    page,
    pageSize,
    sort,
    setPage,
    setQ: (v) => { setQuery(v); setPage(1); },
    setPageSize: (n) => { setSize(n); setPage(1); },
    setSort: (v) => { setOrder(v); setPage(1); },
  };
}

/** A column the list can be ordered by: its two `sort` values, and how the caption says each. */
export interface SortableColumn<S extends string> {
  readonly label: string;
  readonly asc: S;
  readonly desc: S;
  /** The caption's words for each direction ("oldest first", "newest first"). */
  readonly says: readonly [string, string];
  /** The direction of the first press (default ascending; newest first for dates). */
  readonly firstDesc?: boolean;
}

/**
 * A column head that orders the list: a button (Enter or Space), `aria-sort` on the head the list
 * is ordered by; a press orders by it, a second press turns the order round.
 */
function SortHead<S extends string>({ column: c, list }: { column: SortableColumn<S>; list: ListState<S> }) {
  const dir = list.sort === c.asc ? 'ascending' : list.sort === c.desc ? 'descending' : undefined;
  const next = dir === 'ascending' ? c.desc : dir === 'descending' ? c.asc : c.firstDesc ? c.desc : c.asc;
  return (
    <th scope="col" aria-sort={dir}>
      <button type="button" className="sort" onClick={() => list.setSort(next)}>
        {c.label}
        <span aria-hidden="true">{dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ' ↕'}</span>
      </button>
    </th>
  );
}

/** A labelled search field (role="search"), with optional extra controls beside it. */
export function SearchBox({ id, label, value, onChange, children }: { id: string; label: string; value: string; onChange: (q: string) => void; children?: ReactNode }) {
  return (
    <form role="search" className="toolbar" onSubmit={(e) => e.preventDefault()}>
      <label htmlFor={id}>{label}</label>
      <input id={id} type="search" value={value} onChange={(e) => onChange(e.target.value)} />
      {children}
    </form>
  );
}

/** The page sizes offered (the API takes 1..100). */
export const PAGE_SIZES = [10, 25, 50, 100] as const;

/** Previous / next, and how many rows a page holds. */
export function Pager({ list, totalPages }: { list: Pick<ListState, 'page' | 'pageSize' | 'setPage' | 'setPageSize'>; totalPages: number }) {
  const id = useId();
  return (
    <nav aria-label="Pages" className="pager">
      <button type="button" disabled={list.page <= 1} onClick={() => list.setPage(list.page - 1)}>Previous</button>
      <span>Page {list.page} of {Math.max(totalPages, 1)}</span>
      <button type="button" disabled={list.page >= totalPages} onClick={() => list.setPage(list.page + 1)}>Next</button>
      <span>
        <label htmlFor={id}>Per page</label>{' '}
        <select id={id} value={list.pageSize} onChange={(e) => list.setPageSize(Number(e.target.value))}>
          {PAGE_SIZES.map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </span>
    </nav>
  );
}

/** A table that scrolls sideways inside the page on a narrow screen (focusable, so the keyboard can scroll it too). */
export function Scroll({ label, children }: { label: string; children: ReactNode }) {
  return <div className="scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>;
}


/** The caption's words for the list's order. */
function orderSaid<S extends string>(columns: ReadonlyArray<string | SortableColumn<S>>, sort: S): string {
  for (const c of columns) {
    if (typeof c === 'string') continue;
    if (c.asc === sort) return c.says[0];
    if (c.desc === sort) return c.says[1];
  }
  return sort.startsWith('-') ? 'newest first' : 'oldest first';
}

/**
 * A page of an API list as a table (in its Scroll region): caption "3 roles, newest first" (its
 * order in words), column heads (those of a SortableColumn order the list), one row per item,
 * the pager below.
 */
export function PagedTable<T, S extends string>(props: {
  list: ListState<S>;
  page: { items: readonly T[]; totalCount: number; totalPages: number };
  /** Singular, for the caption ("role"). */
  noun: string;
  /** The region's name ("Roles"). */
  label: string;
  columns: ReadonlyArray<string | SortableColumn<S>>;
  /** Many columns: a readable minimum width on a phone (the region scrolls). */
  wide?: boolean;
  /**
   * The rows shown are the previous query's while the new one loads (the table stays, and the
   * focus with it on the head just pressed): aria-busy says so.
   */
  busy?: boolean;
  row: (item: T) => ReactNode;
}) {
  return (
    <>
      <Scroll label={props.label}>
        <table className={props.wide ? 'wide' : undefined} aria-busy={props.busy ?? false}>
          <caption>{counted(props.page.totalCount, props.noun)}, {orderSaid(props.columns, props.list.sort)}</caption>
          <thead>
            <tr>
              {props.columns.map((c) => (typeof c === 'string' ? <th scope="col" key={c}>{c}</th> : <SortHead key={c.label} column={c} list={props.list} />))}
            </tr>
          </thead>
          <tbody>{props.page.items.map(props.row)}</tbody>
        </table>
      </Scroll>
      <Pager list={props.list} totalPages={props.page.totalPages} />
    </>
  );
}
