/** The lists' parts: their state (search, page, page size), the search box, the pager, the scrolling table. */
import { type ReactNode, useId, useState } from 'react';
import type { ListQuery } from '../api/resources';
import { queryParam } from '../router';
import { counted } from './ui';

/** A list's search and paging (the API's page/pageSize/q). */
export type ListState = Required<Pick<ListQuery, 'q' | 'page' | 'pageSize'>> & { setQ: (q: string) => void; setPage: (p: number) => void; setPageSize: (n: number) => void };

/** The search starts from the URL's `?q=`; a new search or size starts at page 1. */
export function useListState(defaultPageSize = 25): ListState {
  const [q, setQuery] = useState(() => queryParam('q'));
  const [page, setPage] = useState(1);
  const [pageSize, setSize] = useState(defaultPageSize);
  return {
    q,
    page,
    pageSize,
    setPage,
    setQ: (v) => { setQuery(v); setPage(1); },
    setPageSize: (n) => { setSize(n); setPage(1); },
  };
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
export function Pager({ list, totalPages }: { list: ListState; totalPages: number }) {
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


/** A page of an API list as a table (in its Scroll region): caption "3 roles, oldest first" (the API's only order), column heads, one row per item, the pager below. */
export function PagedTable<T>(props: {
  list: ListState;
  page: { items: readonly T[]; totalCount: number; totalPages: number };
  /** Singular, for the caption ("role"). */
  noun: string;
  /** The region's name ("Roles"). */
  label: string;
  columns: readonly string[];
  /** Many columns: a readable minimum width on a phone (the region scrolls). */
  wide?: boolean;
  row: (item: T) => ReactNode;
}) {
  return (
    <>
      <Scroll label={props.label}>
        <table className={props.wide ? 'wide' : undefined}>
          <caption>{counted(props.page.totalCount, props.noun)}, oldest first</caption>
          <thead><tr>{props.columns.map((c) => <th scope="col" key={c}>{c}</th>)}</tr></thead>
          <tbody>{props.page.items.map(props.row)}</tbody>
        </table>
      </Scroll>
      <Pager list={props.list} totalPages={props.page.totalPages} />
    </>
  );
}
